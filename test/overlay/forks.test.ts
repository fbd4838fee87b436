import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryFs, type MemoryFileSystem } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { composeOverlay } from '../../src/backends/overlay/compose.js';
import { openDirStore } from '../../src/backends/overlay/store.js';
import { RUNS, lowerTreeArb, opArb, runOp, stored, utf8, viewOf, type Op } from './helpers.js';
import { crashingStore, memoryDisk } from './stores.js';

let base: string;
let n = 0;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'dsh-overlay-forks-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});
const freshDir = () => join(base, `s${n++}`);

/**
 * Where the root overlay keeps its upper: in memory; in a memory store (forks in memory); or in a
 * state directory, forks in state directories of their own. Tiny compaction thresholds, so saves
 * both append and write new documents, before and after forks.
 */
type Persist = 'memory' | 'journal' | 'dir';
const tuning = { compactMinBytes: 0, compactRatio: 1 };
async function rootOverlay(lower: MemoryFileSystem, persist: Persist): Promise<{ fs: OverlayFileSystem; dir?: string }> {
  if (persist === 'memory') return { fs: await createOverlayFs({ lower }) };
  if (persist === 'journal') return { fs: await composeOverlay({ lower }, crashingStore(memoryDisk()), tuning) };
  const dir = freshDir();
  return { fs: await composeOverlay({ lower }, await openDirStore(dir), tuning), dir };
}

/** An operation on one of the views, a fork of one, or one adopting another's view (views are numbered in the order they were made). */
type Step = { view: number; op: Op } | { view: number; fork: true } | { view: number; adopt: number };
const stepsArb = fc.array(
  fc.oneof(
    { weight: 10, arbitrary: fc.record({ view: fc.nat(5), op: opArb }) },
    { weight: 3, arbitrary: fc.record({ view: fc.nat(5), fork: fc.constant(true as const) }) },
    { weight: 2, arbitrary: fc.record({ view: fc.nat(5), adopt: fc.nat(5) }) },
  ),
  { maxLength: 24 },
);

interface View {
  fs: OverlayFileSystem;
  dir: string | undefined;
  /** The reference model: a memory filesystem that saw this view's own history. */
  oracle: MemoryFileSystem;
  /** The model at the fork (the parent's view then); undefined for the root. */
  atFork: MemoryFileSystem | undefined;
}

function copyOf(fs: MemoryFileSystem): MemoryFileSystem {
  const copy = createMemoryFs();
  copy.restore(fs.snapshot());
  return copy;
}

/** The files of a view by their own paths (not those seen through the lower's symlinks). */
async function ownFiles(fs: MemoryFileSystem): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const [p, e] of Object.entries(await viewOf(fs))) if (e.type === 'file' && (await fs.resolve(p)).targetKey === p) out[p] = e.bytes;
  return out;
}

async function play(tree: Parameters<typeof createMemoryFs>[0] extends infer T ? T : never, steps: Step[], persist: Persist) {
  const lower = createMemoryFs(tree as never);
  const before = lower.snapshot();
  const root = await rootOverlay(lower, persist);
  const views: View[] = [{ fs: root.fs, dir: root.dir, oracle: copyOf(lower), atFork: undefined }];
  for (const [i, step] of steps.entries()) {
    const v = views[step.view % views.length]!;
    if ('fork' in step) {
      const dir = v.dir === undefined ? undefined : freshDir();
      const fs = await v.fs.fork(dir === undefined ? {} : { stateDir: dir });
      views.push({ fs, dir, oracle: copyOf(v.oracle), atFork: copyOf(v.oracle) });
      continue;
    }
    if ('adopt' in step) {
      const winner = views[step.adopt % views.length]!;
      await v.fs.adopt(winner.fs);
      v.oracle = copyOf(winner.oracle);
      continue;
    }
    const got = await runOp(v.fs, step.op);
    const want = await runOp(v.oracle, step.op);
    expect(got, `step ${i} on view ${views.indexOf(v)}: ${JSON.stringify(step.op)}`).toEqual(want);
  }
  return { lower, before, views };
}

describe('overlay forks', () => {
  it('for any interleaving of operations on a parent and its forks, each view equals the model of its own history; the lower is untouched', async () => {
    await fc.assert(
      fc.asyncProperty(lowerTreeArb, stepsArb, fc.constantFrom<Persist>('memory', 'journal', 'journal', 'dir'), async (tree, steps, persist) => {
        const { lower, before, views } = await play(tree, steps, persist);
        for (const [i, v] of views.entries()) {
          expect(await viewOf(v.fs), `view ${i}`).toEqual(await viewOf(v.oracle));
          if (v.atFork === undefined) continue;
          // Against the parent: exactly the files whose content differs from the parent's at the fork.
          const was = await ownFiles(v.atFork);
          const is = await ownFiles(v.oracle);
          const differ = [...new Set([...Object.keys(was), ...Object.keys(is)])].filter((p) => was[p] !== is[p]).sort();
          const listed = (await v.fs.changes(undefined, { against: 'parent' })).filter((c) => c.type === 'file').map((c) => c.path);
          expect(listed.sort(), `view ${i} against its parent`).toEqual(differ);
        }
        expect(lower.snapshot()).toEqual(before);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('a persisted fork reopened from its state directory shows the live view, and the same changes against the lower and the parent', async () => {
    await fc.assert(
      fc.asyncProperty(lowerTreeArb, stepsArb, async (tree, steps) => {
        const { lower, views } = await play(tree, steps, 'dir');
        for (const [i, v] of views.entries()) {
          const reopened = await createOverlayFs({ lower, stateDir: v.dir! });
          expect(await viewOf(reopened), `view ${i}`).toEqual(await viewOf(v.fs));
          expect(await reopened.changes(), `view ${i}`).toEqual(await v.fs.changes());
          expect(await reopened.changes(undefined, { against: 'parent' }), `view ${i}`).toEqual(await v.fs.changes(undefined, { against: 'parent' }));
          expect(await reopened.diff(undefined, { against: 'parent' })).toEqual(await v.fs.diff(undefined, { against: 'parent' }));
        }
      }),
      { numRuns: Math.max(5, Math.round(RUNS / 2)) },
    );
  });

  it('adopt replaces the parent view with the fork; commit then writes the fork\'s changes', async () => {
    for (const persist of ['memory', 'dir'] as const) {
      const lower = createMemoryFs({ files: { '/a.txt': 'a\n', '/b.txt': 'b\n' } });
      const { fs: parent } = await rootOverlay(lower, persist);
      await parent.writeText(await parent.resolve('/a.txt'), 'parent\n');
      const fork = await parent.fork();
      await fork.writeText(await fork.resolve('/b.txt'), 'fork\n');
      await fork.remove(await fork.resolve('/a.txt'));
      await parent.writeText(await parent.resolve('/c.txt'), 'parent only\n');
      await parent.adopt(fork);
      expect(await viewOf(parent)).toEqual(await viewOf(fork));
      const result = await parent.commit();
      expect(result.conflicts).toEqual([]);
      expect(await viewOf(lower)).toEqual(await viewOf(fork));
      // The fork still holds its own changes; the lower now has them too.
      expect((await fork.changes()).map((c) => c.path)).toEqual(['/a.txt', '/b.txt']);
    }
  });

  it('a commit from a fork keeps conflict detection against the lower', async () => {
    const lower = createMemoryFs({ files: { '/a.txt': 'a\n' } });
    const parent = await createOverlayFs({ lower });
    await parent.writeText(await parent.resolve('/a.txt'), 'parent\n');
    const fork = await parent.fork();
    await fork.writeText(await fork.resolve('/a.txt'), 'fork\n');
    await lower.writeText(await lower.resolve('/a.txt'), 'outside\n');
    const result = await fork.commit();
    expect(result.conflicts.map((c) => c.path)).toEqual(['/a.txt']);
    expect(await lower.readText(await lower.resolve('/a.txt'))).toMatchObject({ text: 'outside\n' });
  });

  it('changes and diff against the parent show what the fork did differently', async () => {
    const lower = createMemoryFs({ files: { '/a.txt': 'one\ntwo\n', '/b.txt': 'b\n' } });
    const parent = await createOverlayFs({ lower });
    await parent.writeText(await parent.resolve('/a.txt'), 'one\nTWO\n');
    const fork = await parent.fork();
    await fork.editText(await fork.resolve('/a.txt'), { oldString: 'one', newString: 'ONE' });
    await fork.writeText(await fork.resolve('/n.txt'), 'new\n');
    expect((await fork.changes()).map((c) => [c.path, c.kind])).toEqual([['/a.txt', 'modified'], ['/n.txt', 'added']]);
    expect((await fork.changes(undefined, { against: 'parent' })).map((c) => [c.path, c.kind])).toEqual([['/a.txt', 'modified'], ['/n.txt', 'added']]);
    const diff = await fork.diff(['/a.txt'], { against: 'parent' });
    expect(diff).toContain('-one\n+ONE\n');
    expect(diff).not.toContain('-two');
    expect(await parent.changes(undefined, { against: 'parent' })).toEqual(await parent.changes());
    await expect(fork.changes(undefined, { against: 'other' as never })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
  });

  it('a persisted fork shares the parent\'s blobs, and discarding it frees only what it alone referenced', async () => {
    const lower = createMemoryFs({ files: { '/a.txt': 'a\n' } });
    const parentDir = freshDir();
    const forkDir = freshDir();
    const parent = await createOverlayFs({ lower, stateDir: parentDir, keepCheckpoints: 0 });
    await parent.writeText(await parent.resolve('/a.txt'), stored('shared'));
    await parent.writeText(await parent.resolve('/small.txt'), 'inline\n');
    const fork = await parent.fork({ stateDir: forkDir });
    const blobs = (dir: string) => readdir(join(dir, 'blobs'));
    const [shared] = await blobs(parentDir);
    // The same file, not a copy.
    expect((await stat(join(forkDir, 'blobs', shared!))).ino).toBe((await stat(join(parentDir, 'blobs', shared!))).ino);
    await fork.writeText(await fork.resolve('/only-fork.txt'), stored('mine'));
    await fork.writeText(await fork.resolve('/a.txt'), stored('changed in the fork'));
    expect(await fork.readText(await fork.resolve('/small.txt'))).toMatchObject({ text: 'inline\n' });
    expect((await blobs(forkDir)).length).toBe(3);
    await fork.discard();
    // What only the fork wrote is gone; what the fork started from stays (changes against the parent need it).
    expect(await blobs(forkDir)).toEqual([shared]);
    expect(await blobs(parentDir)).toEqual([shared]);
    expect(await viewOf(parent)).toEqual(await viewOf(await createOverlayFs({ lower, stateDir: parentDir, keepCheckpoints: 0 })));
    await expect(parent.fork({ stateDir: forkDir })).rejects.toMatchObject({ code: 'FS_ALREADY_EXISTS' });
    await expect((await createOverlayFs({ lower })).fork({ stateDir: freshDir() })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
  });

  it('writes to the parent after a persisted fork (journal appends, a new document) do not reach the fork', async () => {
    const lower = createMemoryFs({ files: { '/a.txt': 'a\n' } });
    const parentDir = freshDir();
    const parent = await composeOverlay({ lower }, await openDirStore(parentDir), { compactMinBytes: 1 << 20, compactRatio: 100 });
    await parent.writeText(await parent.resolve('/a.txt'), 'before\n');
    const forkDir = freshDir();
    const fork = await parent.fork({ stateDir: forkDir });
    await parent.writeText(await parent.resolve('/a.txt'), 'after\n');
    await parent.writeText(await parent.resolve('/p.txt'), 'p\n');
    await parent.discard(['/p.txt']); // a sweep: a new document
    await parent.writeBytes(await parent.resolve('/q.txt'), utf8('q'));
    const reopened = await createOverlayFs({ lower, stateDir: forkDir });
    expect(await reopened.readText(await reopened.resolve('/a.txt'))).toMatchObject({ text: 'before\n' });
    expect(await viewOf(reopened)).toEqual(await viewOf(fork));
  });
});
