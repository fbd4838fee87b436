import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { composeOverlay } from '../../src/backends/overlay/compose.js';
import { frame } from '../../src/backends/overlay/state-format.js';
import { RUNS, lowerTreeArb, opArb, runOp, stored, viewOf, type Op, type ViewEntry } from './helpers.js';
import { crashingStore, memoryDisk } from './stores.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'dsh-overlay-history-'));
  dirs.push(d);
  return d;
}

/** A rewind of everything, or of one path (top-level, or below directories removed or replaced since). */
type Step = { readonly op: Op } | { readonly rewind: number; readonly path: string | null };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: opArb.map((op) => ({ op })) },
  {
    weight: 1,
    arbitrary: fc.record({ rewind: fc.nat(50), path: fc.option(fc.constantFrom('/a', '/b', '/d', '/e', '/n', '/d/a', '/d/e', '/d/e/f', '/a/x', '/e/g', '/n/m/o', '/n/z')) }),
  },
);

type View = Record<string, ViewEntry>;
const withoutDirVersions = (view: View): View => Object.fromEntries(Object.entries(view).map(([k, e]) => [k, e.type === 'directory' ? { type: e.type } : e]));

/** Paths that may lead through the lower's symlinks (`/l` to `/d`, `/lf` to `/d/a`): other names of what a rewind restores. */
const aliased = (k: string) => k === '/l' || k.startsWith('/l/') || k === '/lf';
const sorted = (v: View): View => Object.fromEntries(Object.entries(v).filter(([k]) => !aliased(k)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * `now` with what lies at and below `path` taken from `then`, and, when `then` showed something
 * there, its directories above `path` (directory versions left out: they depend on both).
 */
function spliced(now: View, then: View, path: string): View {
  const within = (k: string) => k === path || k.startsWith(`${path}/`);
  const keep = (v: View, inside: boolean) => Object.entries(withoutDirVersions(v)).filter(([k]) => within(k) === inside);
  const parents: [string, ViewEntry][] = [];
  if (then[path] !== undefined) for (let d = dirname(path); d !== '/'; d = dirname(d)) parents.push([d, { type: 'directory' } as ViewEntry]);
  return sorted(Object.fromEntries([...keep(now, false), ...parents, ...keep(then, true)]));
}

/** Views seen right after each checkpoint an operation ended on: what a rewind to it must show. */
async function note(fs: OverlayFileSystem, seen: Map<number, Record<string, ViewEntry>>): Promise<void> {
  const last = fs.checkpoints().at(-1);
  if (last && !seen.has(last.id)) seen.set(last.id, await viewOf(fs));
}

/** Rewinds a fork of `fs` to each kept checkpoint of `ids` and compares its view with the one seen then. */
async function checkRewinds(fs: OverlayFileSystem, seen: Map<number, Record<string, ViewEntry>>, ids: readonly number[]): Promise<void> {
  for (const id of ids) {
    const fork = await fs.fork();
    await fork.rewind(id);
    expect(await viewOf(fork)).toEqual(seen.get(id));
  }
}

describe('overlay checkpoints and rewind', () => {
  it('the view after rewind(id) is the view at id (at and below a path, with paths), before and after reopening; the lower is untouched', async () => {
    await fc.assert(
      fc.asyncProperty(lowerTreeArb, fc.array(stepArb, { maxLength: 12 }), fc.constantFrom(3, 1000), fc.constantFrom(6, Infinity), async (tree, steps, keep, keepBytes) => {
        const lower = createMemoryFs({ files: tree });
        const lowerView = await viewOf(lower);
        const disk = memoryDisk();
        // A small compaction threshold: documents with checkpoints are written and read often.
        const open = () => composeOverlay({ lower }, crashingStore(disk), { compactMinBytes: 600, compactRatio: 1, keepCheckpoints: keep, keepCheckpointBytes: keepBytes });
        const fs = await open();
        const seen = new Map<number, Record<string, ViewEntry>>();
        for (const step of steps) {
          if ('op' in step) {
            await runOp(fs, step.op);
            await note(fs, seen);
            continue;
          }
          const ids = [...seen.keys()];
          if (ids.length === 0) continue;
          const id = ids[step.rewind % ids.length]!;
          if (!fs.checkpoints().some((c) => c.id === id)) {
            await expect(fs.rewind(id)).rejects.toMatchObject({ code: 'FS_NOT_FOUND' });
            continue;
          }
          if (step.path === null) {
            await fs.rewind(id);
            expect(await viewOf(fs)).toEqual(seen.get(id));
          } else {
            const expected = spliced(await viewOf(fs), seen.get(id)!, step.path);
            await fs.rewind(id, { paths: [step.path] });
            expect(sorted(withoutDirVersions(await viewOf(fs)))).toEqual(expected);
          }
          await note(fs, seen);
        }
        const kept = fs.checkpoints();
        expect(kept.length).toBeLessThanOrEqual(keep);
        kept.forEach((c, i) => i > 0 && expect(c.id).toBe(kept[i - 1]!.id + 1));
        const ids = [...seen.keys()].filter((id) => kept.some((c) => c.id === id)).slice(-4);
        await checkRewinds(fs, seen, ids);
        const reopened = await open();
        expect(reopened.checkpoints()).toEqual(kept);
        expect(await viewOf(reopened)).toEqual(await viewOf(fs));
        await checkRewinds(reopened, seen, ids);
        expect(await viewOf(lower)).toEqual(lowerView);
      }),
      { numRuns: RUNS },
    );
  }, 60_000);

  it('rewinds one path (and what is below it) only', async () => {
    const lower = createMemoryFs({ files: { '/a': 'a0', '/b': 'b0', '/d/x': 'x0' } });
    const fs = await createOverlayFs({ lower });
    await fs.writeText(await fs.resolve('/a'), 'a1');
    await fs.writeText(await fs.resolve('/b'), 'b1');
    const [, second] = fs.checkpoints();
    await fs.writeText(await fs.resolve('/a'), 'a2');
    await fs.writeText(await fs.resolve('/b'), 'b2');
    await fs.rmdir(await fs.resolve('/d'), { recursive: true });
    await fs.rewind(second!.id, { paths: ['/a', '/d'] });
    expect((await fs.readText(await fs.resolve('/a'))).text).toBe('a1');
    expect((await fs.readText(await fs.resolve('/b'))).text).toBe('b2');
    expect((await fs.readText(await fs.resolve('/d/x'))).text).toBe('x0');
    expect(fs.checkpoints().at(-1)).toMatchObject({ source: `rewind to ${second!.id}`, paths: ['/a', '/d', '/d/x'] });
    expect((await lower.readText(await lower.resolve('/a'))).text).toBe('a0');
  });

  it('rewind paths leaves no removed ancestor dir: the directories above come back, nothing else of them', async () => {
    for (const where of ['lower', 'upper'] as const) {
      const lower = createMemoryFs({ files: where === 'lower' ? { '/a/b.txt': 'b', '/a/c.txt': 'c', '/a/s/d': 'd' } : {} });
      const fs = await createOverlayFs({ lower });
      if (where === 'upper') for (const f of ['/a/b.txt', '/a/c.txt', '/a/s/d']) await fs.writeText(await fs.resolve(f), f.slice(-1));
      await fs.writeText(await fs.resolve('/x'), 'x');
      const id = fs.checkpoints().at(-1)!.id;
      const then = await viewOf(fs);
      await fs.rmdir(await fs.resolve('/a'), { recursive: true });
      await fs.rewind(id, { paths: ['a/b.txt'] });
      const now = await viewOf(fs);
      expect(Object.keys(now).sort(), where).toEqual(['/', '/a', '/a/b.txt', '/x']);
      expect(now['/a/b.txt'], where).toEqual(then['/a/b.txt']);
      if (where === 'lower') {
        // The others stay removed (a commit would delete them from the lower).
        expect((await fs.changes()).map((c) => `${c.kind} ${c.path}`)).toEqual(['deleted /a/c.txt', 'deleted /a/s', 'deleted /a/s/d', 'added /x']);
      }
      // The whole rewind brings everything back.
      await fs.rewind(id);
      expect(await viewOf(fs), where).toEqual(then);
      expect(await viewOf(lower), where).toEqual(await viewOf(createMemoryFs({ files: where === 'lower' ? { '/a/b.txt': 'b', '/a/c.txt': 'c', '/a/s/d': 'd' } : {} })));
    }
  });

  it('a rewind is a change: it records a checkpoint, and can be rewound', async () => {
    const fs = await createOverlayFs({ lower: createMemoryFs() });
    for (const n of [1, 2, 3]) await fs.writeText(await fs.resolve(`/f${n}`), `${n}`);
    const before = await viewOf(fs);
    const last = fs.checkpoints().at(-1)!.id;
    await fs.rewind(1);
    expect(Object.keys(await viewOf(fs)).sort()).toEqual(['/', '/f1']);
    expect(fs.checkpoints().map((c) => c.id)).toEqual([1, 2, 3, 4]);
    await fs.rewind(last);
    expect(await viewOf(fs)).toEqual(before);
    expect(fs.checkpoints().at(-1)).toMatchObject({ id: 5, source: 'rewind to 3', paths: ['/f2', '/f3'] });
    // Rewinding to where the view already is changes nothing, and records nothing.
    await fs.rewind(5);
    expect(fs.checkpoints()).toHaveLength(5);
  });

  it('an unknown checkpoint is FS_NOT_FOUND; a malformed id is FS_INVALID_ARGUMENT', async () => {
    const fs = await createOverlayFs({ lower: createMemoryFs() });
    await expect(fs.rewind(1)).rejects.toMatchObject({ code: 'FS_NOT_FOUND', message: expect.stringContaining('no checkpoint 1 (none is kept)') });
    await fs.writeText(await fs.resolve('/a'), 'a');
    await expect(fs.rewind(7)).rejects.toMatchObject({ code: 'FS_NOT_FOUND', message: expect.stringContaining('those kept are 1 to 1') });
    await expect(fs.changes(undefined, { from: 9 })).rejects.toMatchObject({ code: 'FS_NOT_FOUND' });
    await expect(fs.rewind(0)).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    await expect(fs.rewind('x' as unknown as number)).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    await expect(fs.changes(undefined, { to: 1 })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
  });

  it('keeps the newest checkpoints only; blobs only dropped ones held are deleted; reopening keeps the same', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs();
    const fs = await createOverlayFs({ lower, stateDir, keepCheckpoints: 2 });
    const a = await fs.resolve('/a');
    for (let i = 1; i <= 5; i++) await fs.writeText(a, stored(`v${i}`));
    expect(fs.checkpoints().map((c) => c.id)).toEqual([4, 5]);
    expect(await readdir(join(stateDir, 'blobs'))).toHaveLength(2);
    await expect(fs.rewind(3)).rejects.toMatchObject({ code: 'FS_NOT_FOUND' });
    const reopened = await createOverlayFs({ lower, stateDir, keepCheckpoints: 2 });
    expect(reopened.checkpoints()).toEqual(fs.checkpoints());
    // A larger count brings back nothing dropped (its contents are gone).
    expect((await createOverlayFs({ lower, stateDir })).checkpoints()).toEqual(fs.checkpoints());
    await reopened.rewind(4);
    expect((await reopened.readText(a)).text).toBe(stored('v4'));
    expect(reopened.checkpoints().map((c) => c.id)).toEqual([5, 6]);
    // Reopened with a smaller count: the oldest go.
    const fewer = await createOverlayFs({ lower, stateDir, keepCheckpoints: 1 });
    expect(fewer.checkpoints().map((c) => c.id)).toEqual([6]);
    await expect(createOverlayFs({ lower, keepCheckpoints: -1 })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
  });

  it('keeps checkpoints holding at most keepCheckpointBytes of replaced contents (the oldest go first), also after reopening', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs({ files: { '/big': 'x'.repeat(100) } });
    // Contents kept as blobs, each L bytes; the bound holds two of them.
    const v = (i: number) => stored(`v${i}__`);
    const L = v(1).length;
    const fs = await createOverlayFs({ lower, stateDir, keepCheckpointBytes: 2 * L + 2 });
    const a = await fs.resolve('/a');
    // Each write after the first replaces L bytes that the checkpoints before it hold.
    for (let i = 1; i <= 6; i++) await fs.writeText(a, v(i));
    expect(fs.checkpoints().map((c) => c.id)).toEqual([4, 5, 6]);
    expect(await readdir(join(stateDir, 'blobs'))).toHaveLength(3);
    await fs.rewind(4);
    expect((await fs.readText(a)).text).toBe(v(4));
    // The rewind replaced L bytes too: 5 goes (6 and 7 hold 2L bytes).
    expect(fs.checkpoints().map((c) => c.id)).toEqual([5, 6, 7]);
    // A lower file's content is not the sandbox's to hold: removing it costs nothing.
    await fs.remove(await fs.resolve('/big'));
    expect(fs.checkpoints().map((c) => c.id)).toEqual([5, 6, 7, 8]);
    const reopened = await createOverlayFs({ lower, stateDir, keepCheckpointBytes: 2 * L + 2 });
    expect(reopened.checkpoints()).toEqual(fs.checkpoints());
    // Reopened with a larger bound, what was dropped (and its contents deleted) stays dropped.
    const larger = await createOverlayFs({ lower, stateDir, keepCheckpointBytes: Infinity });
    expect(larger.checkpoints()).toEqual(fs.checkpoints());
    const fewer = await createOverlayFs({ lower, stateDir, keepCheckpointBytes: L });
    expect(fewer.checkpoints().map((c) => c.id)).toEqual([6, 7, 8]);
    // In memory the same bound applies; 0 keeps only the newest once a content is replaced.
    const mem = await createOverlayFs({ lower, keepCheckpointBytes: 0 });
    await mem.writeText(a, 'one');
    await mem.writeText(await mem.resolve('/b'), 'b');
    expect(mem.checkpoints().map((c) => c.id)).toEqual([1, 2]);
    await mem.writeText(a, 'two');
    expect(mem.checkpoints().map((c) => c.id)).toEqual([3]);
    await expect(createOverlayFs({ lower, keepCheckpointBytes: -1 })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
  });

  it('labels a change with owner and source; labels and times survive reopening (and compaction)', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs();
    const fs = await createOverlayFs({ lower, stateDir });
    await fs.label({ owner: 'alice', source: 'tool:write' }, async () => fs.writeText(await fs.resolve('/a'), 'a'));
    await fs.writeText(await fs.resolve('/b'), 'b');
    const kept = fs.checkpoints();
    expect(kept).toMatchObject([{ id: 1, owner: 'alice', source: 'tool:write', paths: ['/a'] }, { id: 2, paths: ['/b'] }]);
    expect(kept[1]).not.toHaveProperty('owner');
    expect((await createOverlayFs({ lower, stateDir })).checkpoints()).toEqual(kept);
    await fs.discard(['/b']);
    await fs.discard(); // folds the journal into a new document
    const doc = JSON.parse(await readFile(join(stateDir, 'overlay.json'), 'utf8'));
    expect(doc).toMatchObject({ version: 5, checkpoint: 4 });
    const reopened = await createOverlayFs({ lower, stateDir });
    expect(reopened.checkpoints()).toEqual(fs.checkpoints());
    await reopened.rewind(2);
    expect(Object.keys(await viewOf(reopened)).sort()).toEqual(['/', '/a', '/b']);
  });

  it('changes and diff between two checkpoints, or from one to now', async () => {
    const lower = createMemoryFs({ files: { '/a': 'a\n' } });
    const fs = await createOverlayFs({ lower });
    await fs.writeText(await fs.resolve('/a'), 'a1\n');
    await fs.writeText(await fs.resolve('/b'), 'b\n');
    await fs.remove(await fs.resolve('/a'));
    expect((await fs.changes(undefined, { from: 1, to: 2 })).map((c) => `${c.kind} ${c.path}`)).toEqual(['added /b']);
    expect((await fs.changes(undefined, { from: 1 })).map((c) => `${c.kind} ${c.path}`)).toEqual(['deleted /a', 'added /b']);
    expect(await fs.diff(['/a'], { from: 1 })).toContain('-a1\n');
    expect(await fs.diff(undefined, { from: 2, to: 2 })).toBe('');
  });

  it('a fork starts with its parent\'s checkpoints (in memory and in a state directory); adopt records one', async () => {
    const lower = createMemoryFs({ files: { '/a': 'a0' } });
    const parentDir = await tempDir();
    const parent = await createOverlayFs({ lower, stateDir: parentDir });
    await parent.writeText(await parent.resolve('/a'), 'a1');
    await parent.writeText(await parent.resolve('/b'), 'b1');
    const forkDir = join(await tempDir(), 'fork');
    for (const fork of [await parent.fork(), await parent.fork({ stateDir: forkDir })]) {
      expect(fork.checkpoints()).toEqual(parent.checkpoints());
      await fork.writeText(await fork.resolve('/a'), 'a2');
      expect(fork.checkpoints().map((c) => c.id)).toEqual([1, 2, 3]);
      expect(parent.checkpoints().map((c) => c.id)).toEqual([1, 2]);
    }
    const reopened = await createOverlayFs({ lower, stateDir: forkDir });
    expect(reopened.checkpoints().map((c) => c.id)).toEqual([1, 2, 3]);
    await reopened.rewind(1);
    expect(Object.keys(await viewOf(reopened)).sort()).toEqual(['/', '/a']);
    expect((await reopened.readText(await reopened.resolve('/a'))).text).toBe('a1');
    await parent.adopt(reopened);
    expect(parent.checkpoints().at(-1)).toMatchObject({ id: 3, paths: ['/b'] });
    await parent.rewind(2);
    expect((await parent.readText(await parent.resolve('/b'))).text).toBe('b1');
    expect((await createOverlayFs({ lower, stateDir: parentDir })).checkpoints().map((c) => c.id)).toEqual([1, 2, 3, 4]);
  });

  it('reads a version-3 state (no checkpoints) and saves it as version 5 with checkpoints', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs({ files: { '/old': 'o' } });
    const base = (await lower.stat(await lower.resolve('/old')))!.version;
    await writeFile(join(stateDir, 'overlay.json'), JSON.stringify({ format: 'dsh-fs-overlay', version: 3, root: '/', generation: 1, entries: [], dirs: [], opaque: [] }));
    const journal = Buffer.concat([
      frame({ format: 'dsh-fs-overlay-journal', version: 3, root: '/', generation: 1 }),
      frame({ entries: [{ path: '/old', base, blob: null }] }),
    ]);
    await writeFile(join(stateDir, 'overlay.journal'), journal);
    const fs = await createOverlayFs({ lower, stateDir });
    expect(fs.checkpoints()).toEqual([]);
    expect((await fs.changes()).map((c) => `${c.kind} ${c.path}`)).toEqual(['deleted /old']);
    await fs.mkdir(await fs.resolve('/m'));
    expect(JSON.parse(await readFile(join(stateDir, 'overlay.json'), 'utf8'))).toMatchObject({ version: 5, generation: 2, checkpoint: 1 });
    const reopened = await createOverlayFs({ lower, stateDir });
    expect(reopened.checkpoints()).toMatchObject([{ id: 1, paths: ['/m'] }]);
    expect(await reopened.changes()).toEqual(await fs.changes());
  });
});
