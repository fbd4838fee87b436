import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { applyHunks } from '../../src/review/hunks.js';
import { memoryFeedback, openReview } from '../../src/review/index.js';
import { caseArb, get, numbered, put, splitOf } from './review-helpers.js';

// A fork reviewed against its parent: accepted hunks go to the parent, rejected ones out of the fork.

/** The folder holds a.txt and b.txt; the parent changed a.txt's line 15 before forking; the fork changed lines 3 and 25 and b.txt. */
async function scene() {
  const lower = createMemoryFs();
  await put(lower, '/a.txt', numbered(30));
  await put(lower, '/b.txt', 'one\ntwo\n');
  const parent = await createOverlayFs({ lower });
  await put(parent, '/a.txt', numbered(30, { 15: 'parent 15' }));
  const fork = await parent.fork();
  await put(fork, '/a.txt', numbered(30, { 3: 'changed 3', 15: 'parent 15', 25: 'changed 25' }));
  await put(fork, '/b.txt', 'one\nTWO\n');
  await put(fork, '/c.txt', 'new\n');
  const feedback = memoryFeedback();
  return { lower, parent, fork, feedback, review: openReview(fork, { againstParent: true, parent, feedback }) };
}

describe('review of a fork against its parent', () => {
  it('lists the fork against the parent now: the parent\'s own change is no hunk', async () => {
    const { review } = await scene();
    const files = await review.files();
    expect(files.map((f) => [f.path, f.status, f.kind, f.hunks.length])).toEqual([
      ['a.txt', 'modified', 'text', 2],
      ['b.txt', 'modified', 'text', 1],
      ['c.txt', 'added', 'text', 1],
    ]);
    expect(files[0]!.hunks.flatMap((h) => h.lines.filter((l) => l.startsWith('+') || l.startsWith('-')))).toEqual(['-line 3', '+changed 3', '-line 25', '+changed 25']);
  });

  it('accept writes the parent only, reject reverts the fork and is heard; each leaves the review', async () => {
    const { lower, parent, fork, review, feedback } = await scene();
    const [a, b] = (await review.files())[0]!.hunks;
    const before = { parent: parent.checkpoints().length, fork: fork.checkpoints().length };
    expect(await review.accept([a!.id])).toEqual({ accepted: [a!.id], rejected: [], conflicts: [] });
    expect(await get(parent, '/a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15' }));
    expect(await get(lower, '/a.txt')).toBe(numbered(30));
    expect(await get(fork, '/a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15', 25: 'changed 25' }));
    expect(parent.checkpoints().length).toBe(before.parent + 1);
    expect(fork.checkpoints().length).toBe(before.fork);
    // The accepted hunk left the review; the other kept its id, and can be accepted after the first.
    expect((await review.files())[0]!.hunks.map((h) => h.id)).toEqual([b!.id]);

    expect(await review.reject([b!.id], 'not line 25')).toEqual({ accepted: [], rejected: [b!.id], conflicts: [] });
    expect(await get(fork, '/a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15' }));
    expect(await get(parent, '/a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15' }));
    expect(fork.checkpoints().length).toBe(before.fork + 1);
    expect((await review.files()).map((f) => f.path)).toEqual(['b.txt', 'c.txt']);
    expect((await feedback.pending()).map((f) => [f.path, f.lines, f.reason])).toEqual([['a.txt', '25', 'not line 25']]);
  });

  it('hunks accepted one after the other: the parent took only the fork\'s lines, so no conflict', async () => {
    const { parent, review } = await scene();
    const [a, b] = (await review.files())[0]!.hunks;
    await review.accept([b!.id]);
    expect((await review.accept([a!.id])).conflicts).toEqual([]);
    expect(await get(parent, '/a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15', 25: 'changed 25' }));
    expect((await review.files()).map((f) => f.path)).toEqual(['b.txt', 'c.txt']);
  });

  it('whole files: an added file accepted, a change rejected as a whole', async () => {
    const { parent, fork, review } = await scene();
    const files = await review.files();
    const r = await review.decide([
      { id: files[2]!.id, decision: 'accept' },
      { id: files[1]!.id, decision: 'reject' },
    ]);
    expect(r.conflicts).toEqual([]);
    expect(await get(parent, '/c.txt')).toBe('new\n');
    expect(await get(fork, '/b.txt')).toBe('one\ntwo\n');
    expect((await review.files()).map((f) => f.path)).toEqual(['a.txt']);
  });

  it('a file the parent changed since the fork is a conflict: nothing written to either side', async () => {
    const { parent, fork, review } = await scene();
    const [a, b] = (await review.files())[0]!.hunks;
    await put(parent, '/a.txt', numbered(30, { 10: 'parent 10', 15: 'parent 15' }));
    // The listed ids are stale: the parent's line 10 is now in the diff.
    await expect(review.accept([a!.id])).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    const fresh = (await review.files())[0]!;
    const hunkOf = (text: string) => fresh.hunks.find((h) => h.lines.includes(text))!.id;
    const before = { parent: parent.checkpoints().length, fork: fork.checkpoints().length };
    const r = await review.decide([
      { id: hunkOf('+changed 3'), decision: 'accept' },
      { id: hunkOf('+changed 25'), decision: 'reject' },
    ]);
    expect(r).toMatchObject({ accepted: [], rejected: [], conflicts: [{ path: 'a.txt', code: 'FS_CONFLICT' }] });
    expect(await get(parent, '/a.txt')).toBe(numbered(30, { 10: 'parent 10', 15: 'parent 15' }));
    expect(await get(fork, '/a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15', 25: 'changed 25' }));
    expect([parent.checkpoints().length, fork.checkpoints().length]).toEqual([before.parent, before.fork]);
    expect(b).toBeDefined();
  });

  it('files without lines: a removed directory, an empty one made, a link, a mode; accepted in the parent or rejected in the fork', async () => {
    const lower = createMemoryFs();
    await put(lower, '/d/x.txt', 'x\n');
    await put(lower, '/run.sh', 'echo\n');
    const parent = await createOverlayFs({ lower });
    const fork = await parent.fork();
    await fork.remove(await fork.resolve('/d/x.txt'));
    await fork.rmdir(await fork.resolve('/d'));
    await fork.mkdir(await fork.resolve('/empty'));
    await fork.symlink!(await fork.resolve('/link', { noFollow: true }), 'run.sh');
    await fork.setExecutable!(await fork.resolve('/run.sh'), true);
    const review = openReview(fork, { againstParent: true, parent, feedback: memoryFeedback() });
    const files = await review.files();
    expect(files.map((f) => [f.path, f.status, f.kind])).toEqual([
      ['d', 'deleted', 'directory'],
      ['d/x.txt', 'deleted', 'text'],
      ['empty', 'added', 'directory'],
      ['link', 'added', 'symlink'],
      ['run.sh', 'modified', 'mode'],
    ]);
    // A directory goes only with what is below it.
    expect((await review.accept([files[0]!.id])).conflicts.map((c) => c.path)).toEqual(['d']);
    expect(await get(parent, '/d/x.txt')).toBe('x\n');
    const [d, x, empty, link, mode] = files.map((f) => f.id);
    expect((await review.accept([d!, x!, mode!])).conflicts).toEqual([]);
    expect(await get(parent, '/d/x.txt')).toBeUndefined();
    expect((await parent.stat(await parent.resolve('/run.sh')))?.executable).toBe(true);
    expect((await review.reject([empty!, link!])).conflicts).toEqual([]);
    expect(await fork.stat(await fork.resolve('/empty'))).toBeUndefined();
    expect(await review.files()).toEqual([]);
  });

  it('needs the parent, and a fork of it', async () => {
    const { parent, fork } = await scene();
    expect(() => openReview(fork, { againstParent: true })).toThrow(expect.objectContaining({ code: 'FS_INVALID_ARGUMENT' }));
    expect(() => openReview(fork, { parent })).toThrow(expect.objectContaining({ code: 'FS_INVALID_ARGUMENT' }));
    await expect(openReview(parent, { againstParent: true, parent: fork }).files()).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
  });
});

describe('review against the parent: properties', () => {
  it('any split: parent = base + accepted, fork = base + all but rejected, never a rejected line in the parent', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const { before, after, hunks, decisions, accepted, rejected } = splitOf(c);
        const lower = createMemoryFs();
        await put(lower, '/f.txt', 'the folder\n');
        const parent = await createOverlayFs({ lower });
        await put(parent, '/f.txt', before);
        const fork = await parent.fork();
        await put(fork, '/f.txt', after);
        const review = openReview(fork, { againstParent: true, parent, feedback: memoryFeedback() });
        expect((await review.files())[0]!.hunks.map((h) => h.id)).toEqual(hunks.map((h) => h.id));
        if (decisions.length > 0) expect((await review.decide(decisions)).conflicts).toEqual([]);
        expect(await get(parent, '/f.txt')).toBe(applyHunks(before, after, hunks, (h) => accepted.has(h)));
        expect(await get(fork, '/f.txt')).toBe(applyHunks(before, after, hunks, (h) => !rejected.has(h)));
        expect(await get(lower, '/f.txt')).toBe('the folder\n');
        // The hunks left undecided are what is left to review; accepting them all then gives the parent the fork's file.
        const left = (await review.files())[0]?.hunks ?? [];
        expect(left.length).toBe(hunks.length - accepted.size - rejected.size);
        if (left.length > 0) expect((await review.accept(left.map((h) => h.id))).conflicts).toEqual([]);
        expect(await get(parent, '/f.txt')).toBe(await get(fork, '/f.txt'));
        expect(await get(parent, '/f.txt')).toBe(applyHunks(before, after, hunks, (h) => !rejected.has(h)));
      }),
      { numRuns: 60 },
    );
  });
});
