import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { applyHunks, textHunks } from '../../src/review/hunks.js';
import { openReview, reviewNotes, sandboxFeedback } from '../../src/review/index.js';
import { createHarness } from '../../src/harness/index.js';
import { fsTools } from '../../src/tools/index.js';
import { isFsError } from '../../src/seam/index.js';
import { caseArb, get, lineArb, numbered, put, splitOf, text } from './review-helpers.js';

async function scene() {
  const lower = createMemoryFs();
  await put(lower, '/a.txt', numbered(30));
  await put(lower, '/b.txt', 'one\ntwo\n');
  const sandbox = await createOverlayFs({ lower });
  await put(sandbox, '/a.txt', numbered(30, { 3: 'changed 3', 25: 'changed 25' }));
  await put(sandbox, '/b.txt', 'one\nTWO\n');
  return { lower, sandbox, review: openReview(sandbox) };
}

describe('review model', () => {
  it('lists two distant changes of one file as two hunks, and a second file', async () => {
    const { review } = await scene();
    const files = await review.files();
    expect(files.map((f) => [f.path, f.status, f.kind, f.hunks.length])).toEqual([
      ['a.txt', 'modified', 'text', 2],
      ['b.txt', 'modified', 'text', 1],
    ]);
    const [a1] = files[0]!.hunks;
    expect(a1).toMatchObject({ oldStart: 1, oldLines: 6, newStart: 1, newLines: 6 });
    expect(a1!.lines).toEqual([' line 1', ' line 2', '-line 3', '+changed 3', ' line 4', ' line 5', ' line 6']);
  });

  it('accept publishes only that hunk; the rest stays in the sandbox; one checkpoint', async () => {
    const { lower, sandbox, review } = await scene();
    const [a] = await review.files();
    const before = sandbox.checkpoints().length;
    const result = await review.accept([a!.hunks[0]!.id]);
    expect(result).toEqual({ accepted: [a!.hunks[0]!.id], rejected: [], conflicts: [] });
    expect(await get(lower, '/a.txt')).toBe(numbered(30, { 3: 'changed 3' }));
    expect(await get(sandbox, '/a.txt')).toBe(numbered(30, { 3: 'changed 3', 25: 'changed 25' }));
    expect(sandbox.checkpoints().length).toBe(before + 1);
    const after = await review.files();
    expect(after[0]!.hunks.map((h) => h.id)).toEqual([a!.hunks[1]!.id]);
    expect(after.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
  });

  it('reject reverts the hunk in the sandbox, records the reason once, and rewind undoes it', async () => {
    const { lower, sandbox, review } = await scene();
    const [a] = await review.files();
    const b = a!.hunks[1]!;
    const result = await review.reject([b.id], 'keep the old API');
    expect(result.rejected).toEqual([b.id]);
    expect(await get(sandbox, '/a.txt')).toBe(numbered(30, { 3: 'changed 3' }));
    expect(await get(lower, '/a.txt')).toBe(numbered(30));
    expect(await review.pendingFeedback()).toEqual([{ path: 'a.txt', lines: '25', reason: 'keep the old API', id: b.id }]);
    const cps = sandbox.checkpoints();
    await sandbox.rewind(cps.at(-2)!.id);
    expect(await get(sandbox, '/a.txt')).toBe(numbered(30, { 3: 'changed 3', 25: 'changed 25' }));
  });

  it("the agent's next tool result carries the reason, once", async () => {
    const { sandbox, review } = await scene();
    const harness = createHarness({ fs: sandbox, plugins: [fsTools(), reviewNotes(sandboxFeedback(sandbox))] });
    const [, b] = await review.files();
    await review.reject([b!.id], 'two stays\nlower case');
    const first = await harness.tools.execute('read', { file_path: '/a.txt' }, { owner: 'agent' });
    expect(first.text).toContain('Note: a reviewer rejected your change to b.txt and reverted it in the sandbox: two stays lower case\nRead that file again before editing it.');
    const second = await harness.tools.execute('read', { file_path: '/a.txt' }, { owner: 'agent' });
    expect(second.text).not.toContain('reviewer');
    expect(await review.pendingFeedback()).toEqual([]);
  });

  it('refuses unknown and stale ids with FS_STALE_VERSION and applies nothing', async () => {
    const { lower, sandbox, review } = await scene();
    const [a, b] = await review.files();
    await put(sandbox, '/a.txt', numbered(30, { 3: 'changed again', 25: 'changed 25' }));
    const err = await review.accept([b!.hunks[0]!.id, a!.hunks[0]!.id]).catch((e: unknown) => e);
    expect(isFsError(err, 'FS_STALE_VERSION')).toBe(true);
    expect(String((err as Error).message)).toContain(a!.hunks[0]!.id);
    expect(await get(lower, '/b.txt')).toBe('one\ntwo\n');
    // The unchanged hunk keeps its id.
    expect((await review.files())[0]!.hunks[1]!.id).toBe(a!.hunks[1]!.id);
  });

  it('an accepted hunk whose folder file changed is a conflict: nothing written for that file', async () => {
    const { lower, sandbox, review } = await scene();
    const [a] = await review.files();
    await put(lower, '/a.txt', numbered(31));
    const result = await review.accept([a!.hunks[0]!.id]);
    expect(result.accepted).toEqual([]);
    expect(result.conflicts.map((c) => [c.path, c.code])).toEqual([['a.txt', 'FS_CONFLICT']]);
    expect(await get(lower, '/a.txt')).toBe(numbered(31));
    expect(await get(sandbox, '/a.txt')).toBe(numbered(30, { 3: 'changed 3', 25: 'changed 25' }));
  });

  it('decides added, deleted and binary files as wholes', async () => {
    const lower = createMemoryFs();
    await put(lower, '/gone.txt', 'x\n');
    await lower.writeBytes(await lower.resolve('/bin'), new Uint8Array([0, 1, 2]));
    const sandbox = await createOverlayFs({ lower });
    await put(sandbox, '/new.txt', 'hello\n');
    await sandbox.remove(await sandbox.resolve('/gone.txt'));
    await sandbox.writeBytes(await sandbox.resolve('/bin'), new Uint8Array([0, 9]));
    const review = openReview(sandbox);
    const files = await review.files();
    expect(files.map((f) => [f.path, f.status, f.kind, f.hunks.length])).toEqual([
      ['bin', 'modified', 'binary', 0],
      ['gone.txt', 'deleted', 'text', 1],
      ['new.txt', 'added', 'text', 1],
    ]);
    const [bin, gone, added] = files;
    await review.decide([
      { id: bin!.id, decision: 'accept' },
      { id: gone!.hunks[0]!.id, decision: 'reject', reason: 'still used' },
      { id: added!.id, decision: 'accept' },
    ]);
    expect([...(await lower.readBytes(await lower.resolve("/bin"), { maxBytes: 100 })).bytes]).toEqual([0, 9]);
    expect(await get(lower, '/new.txt')).toBe('hello\n');
    expect(await get(sandbox, '/gone.txt')).toBe('x\n');
    expect(await review.files()).toEqual([]);
    expect((await review.pendingFeedback()).map((f) => [f.path, f.reason])).toEqual([['gone.txt', 'still used']]);
  });

  it('shows a move as a removal and an addition, decided together; a mode change and a link as wholes', async () => {
    const lower = createMemoryFs();
    await put(lower, '/old.txt', 'moved\n');
    await put(lower, '/run.sh', 'echo\n');
    const sandbox = await createOverlayFs({ lower });
    await sandbox.rename!(await sandbox.resolve('/old.txt'), await sandbox.resolve('/new.txt'));
    await sandbox.setExecutable!(await sandbox.resolve('/run.sh'), true);
    await sandbox.symlink!(await sandbox.resolve('/link'), 'run.sh');
    const review = openReview(sandbox);
    const files = await review.files();
    expect(files.map((f) => [f.path, f.status, f.kind])).toEqual([
      ['link', 'added', 'symlink'],
      ['new.txt', 'added', 'text'],
      ['old.txt', 'deleted', 'text'],
      ['run.sh', 'modified', 'mode'],
    ]);
    const [link, added, removed, mode] = files;
    await expect(review.decide([{ id: added!.id, decision: 'accept' }, { id: removed!.id, decision: 'reject' }])).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    const result = await review.decide([
      { id: removed!.hunks[0]!.id, decision: 'accept' },
      { id: mode!.id, decision: 'accept' },
      { id: link!.id, decision: 'reject', reason: 'no links' },
    ]);
    expect(result.conflicts).toEqual([]);
    expect(await get(lower, '/new.txt')).toBe('moved\n');
    expect(await get(lower, '/old.txt')).toBeUndefined();
    expect((await lower.stat(await lower.resolve('/run.sh')))?.executable).toBe(true);
    expect(await review.files()).toEqual([]);
    expect((await review.pendingFeedback()).map((f) => [f.path, f.lines, f.reason])).toEqual([['link', '', 'no links']]);
  });
});

describe('review model properties', () => {
  it('any split: folder = base + accepted, sandbox = base + all but rejected; accept all = commit, reject all = discard', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const { before, after, hunks, decisions, accepted, rejected } = splitOf(c);
        const lower = createMemoryFs();
        await put(lower, '/f.txt', before);
        const sandbox = await createOverlayFs({ lower });
        await put(sandbox, '/f.txt', after);
        const review = openReview(sandbox);
        const [file] = await review.files();
        expect(file!.hunks.map((h) => h.id)).toEqual(hunks.map((h) => h.id));
        if (decisions.length > 0) await review.decide(decisions);
        const folder = applyHunks(before, after, hunks, (h) => accepted.has(h));
        const kept = applyHunks(before, after, hunks, (h) => !rejected.has(h));
        expect(await get(lower, '/f.txt')).toBe(folder);
        expect(await get(sandbox, '/f.txt')).toBe(kept);
        if (accepted.size === hunks.length) expect(await get(lower, '/f.txt')).toBe(after);
        if (rejected.size === hunks.length) expect(await get(sandbox, '/f.txt')).toBe(before);
        // Nothing is left to review for a file whose every hunk was decided.
        if (accepted.size + rejected.size === hunks.length) expect(await sandbox.changes()).toEqual([]);
        // Committing the rest afterwards never brings back a rejected line.
        await sandbox.commit();
        expect(await get(lower, '/f.txt')).toBe(kept);
      }),
      { numRuns: 60 },
    );
  });

  it('a hunk keeps its id under edits to other hunks', () => {
    fc.assert(
      fc.property(fc.array(lineArb, { minLength: 1, maxLength: 3 }), fc.array(lineArb, { minLength: 1, maxLength: 3 }), fc.array(lineArb, { maxLength: 3 }), (first, second, third) => {
        const base = Array.from({ length: 40 }, (_, i) => `line ${i}`);
        const one = [...base];
        one.splice(5, 1, ...first.map((l) => `${l}?`));
        const two = [...one];
        // Far from the first change: more than twice the context apart.
        const at = one.length - 10;
        const a = [...one];
        a.splice(at, 1, ...second.map((l) => `${l}?`));
        two.splice(at, 1, ...third.map((l) => `${l}#`));
        const ha = textHunks('p', text(base, true), text(a, true));
        const hb = textHunks('p', text(base, true), text(two, true));
        expect(ha[0]!.id).toBe(hb[0]!.id);
        expect(ha[0]!.lines).toEqual(hb[0]!.lines);
      }),
    );
  });
});
