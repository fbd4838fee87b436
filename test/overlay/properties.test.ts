import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs, type MemoryFileSystem } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayChange } from '../../src/backends/overlay/index.js';
import { composeOverlay } from '../../src/backends/overlay/compose.js';
import type { FileSystem } from '../../src/seam/index.js';
import { FILES, RUNS, filesOf, lowerTreeArb, opsArb, runOp, utf8, viewOf, type ViewEntry } from './helpers.js';
import { crashingStore, memoryDisk } from './stores.js';

/**
 * The overlay under test: in memory, or persisted (journal and document in a memory store) with a
 * tiny compaction threshold, so saves both append and write new documents.
 */
const persistArb = fc.constantFrom('memory' as const, 'journal' as const);
function sandbox(lower: FileSystem, persist: 'memory' | 'journal') {
  return persist === 'memory'
    ? createOverlayFs({ lower })
    : composeOverlay({ lower }, crashingStore(memoryDisk()), { compactMinBytes: 0, compactRatio: 1 });
}

/** What a commit of `root` takes: the selection grown by rename partners and removed directories above additions. */
function grownSelection(changes: readonly OverlayChange[], root: string): (key: string) => boolean {
  const roots = [root];
  const has = (key: string) => roots.some((r) => key === r || key.startsWith(r === '/' ? '/' : `${r}/`));
  const removed = changes.filter((c) => c.type === 'directory' && c.kind !== 'added').map((c) => c.path);
  for (let grew = true; grew; ) {
    grew = false;
    for (const c of changes) {
      if (!(has(c.path) || (c.from !== undefined && has(c.from)))) continue;
      const more = [c.path, ...(c.from === undefined ? [] : [c.from])];
      if (c.kind !== 'deleted') {
        const above = removed.filter((d) => (d === c.path && c.type === 'directory') || c.path.startsWith(`${d}/`)).sort((a, b) => a.length - b.length);
        if (above[0] !== undefined) more.push(above[0]);
      }
      for (const k of more) if (!has(k)) (roots.push(k), (grew = true));
    }
  }
  return has;
}

/** The reference: a plain memory filesystem restored from a snapshot of the lower. */
function oracleOf(lower: MemoryFileSystem): MemoryFileSystem {
  const oracle = createMemoryFs();
  oracle.restore(lower.snapshot());
  return oracle;
}

const oobArb = fc.array(
  fc.record({ path: fc.constantFrom(...FILES), content: fc.option(fc.constantFrom('', 'a', 'oob\n', 'b a b', 'x\ny\n'), { nil: undefined }) }),
  { maxLength: 4 },
);

describe('overlay properties (lower = memory)', () => {
  it('the view equals the reference model on a snapshot of the lower, and the lower is untouched', async () => {
    await fc.assert(
      fc.asyncProperty(lowerTreeArb, opsArb, persistArb, async (tree, ops, persist) => {
        const lower = createMemoryFs({ files: tree });
        const before = lower.snapshot();
        const oracle = oracleOf(lower);
        const fs = await sandbox(lower, persist);
        for (const [i, op] of ops.entries()) {
          const got = await runOp(fs, op);
          const want = await runOp(oracle, op);
          expect(got, `step ${i}: ${JSON.stringify(op)}`).toEqual(want);
        }
        expect(await viewOf(fs)).toEqual(await viewOf(oracle));
        expect(lower.snapshot()).toEqual(before);
      }),
      { numRuns: RUNS * 3 },
    );
  });

  it('after commit the lower equals the view; the view is unchanged and no changes are left', async () => {
    await fc.assert(
      fc.asyncProperty(lowerTreeArb, opsArb, persistArb, async (tree, ops, persist) => {
        const lower = createMemoryFs({ files: tree });
        const fs = await sandbox(lower, persist);
        for (const op of ops) await runOp(fs, op);
        const changed = (await fs.changes()).map((c) => c.path);
        const view = await viewOf(fs);
        const result = await fs.commit();
        expect(result.conflicts).toEqual([]);
        expect(result.failed).toEqual([]);
        expect(result.committed).toEqual(changed);
        expect(await fs.changes()).toEqual([]);
        expect(await viewOf(fs)).toEqual(view);
        const lowerView = await viewOf(lower, { dirVersions: false });
        expect(filesOf(lowerView)).toEqual(filesOf(view));
        // Directories the overlay made but never put a file in are the only difference.
        for (const [path, entry] of Object.entries(view)) {
          if (entry.type !== 'directory' || lowerView[path]) continue;
          expect(Object.keys(filesOf(view)).some((p) => p.startsWith(`${path}/`)), `${path} exists only in the overlay`).toBe(false);
        }
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('a commit conflicts on exactly the paths changed underneath, and overwrites none of them', async () => {
    await fc.assert(
      fc.asyncProperty(lowerTreeArb, opsArb, oobArb, persistArb, async (tree, ops, oob, persist) => {
        const lower = createMemoryFs({ files: tree });
        const fs = await sandbox(lower, persist);
        for (const op of ops) await runOp(fs, op);
        const changes = await fs.changes();
        const typesBefore = await viewOf(lower, { dirVersions: false });
        const lowerBefore = filesOf(typesBefore);
        for (const { path, content } of oob) {
          const target = await lower.resolve(path);
          if (content === undefined) await lower.remove(target).catch(() => {});
          else await lower.writeBytes(target, utf8(content)).catch(() => {});
        }
        const lowerAfter = filesOf(await viewOf(lower, { dirVersions: false }));
        const lowerTypes = await viewOf(lower, { dirVersions: false });
        const view = await viewOf(fs);
        const touched = new Set(oob.map((o) => o.path));

        // A removed directory conflicts when the lower gained or changed a file at or below it.
        const removedDirs = changes.filter((c) => c.type === 'directory' && c.kind !== 'added').map((c) => c.path);
        // (or a directory appeared there, even an empty one).
        const conflictedDirs = removedDirs.filter(
          (d) =>
            Object.keys(lowerAfter).some((p) => (p === d || p.startsWith(`${d}/`)) && lowerBefore[p]?.bytes !== lowerAfter[p]!.bytes) ||
            Object.keys(lowerTypes).some((p) => p.startsWith(`${d}/`) && lowerTypes[p]!.type === 'directory' && typesBefore[p]?.type !== 'directory'),
        );
        const same = (x: ViewEntry | undefined, y: ViewEntry | undefined) => x?.type === y?.type && x?.bytes === y?.bytes;
        const lowerNow = (p: string) => lowerAfter[p] ?? (lowerTypes[p] ? { type: lowerTypes[p]!.type } : undefined);
        // A file that appeared in the lower where the view has a directory (and the lower had no
        // file before, which the overlay would have removed): what commit would put below it conflicts.
        const fileAbove = (path: string) => {
          for (let d = path.slice(0, path.lastIndexOf('/')); d !== ''; d = d.slice(0, d.lastIndexOf('/'))) {
            if (lowerTypes[d]?.type === 'file' && typesBefore[d]?.type !== 'file') return true;
          }
          return false;
        };
        const blocked = changes.filter((c) => c.kind !== 'deleted' && fileAbove(c.path));
        const conflicts = (c: OverlayChange, dirs: readonly string[]) => {
          if (blocked.includes(c)) return true;
          // What appears inside a removed directory whose removal conflicts waits for it.
          if (c.kind !== 'deleted' && dirs.some((d) => c.path.startsWith(`${d}/`) || (c.path === d && c.type === 'file'))) return true;
          if (c.type === 'directory' && c.kind !== 'added') return dirs.includes(c.path);
          const wanted = view[c.path]?.type === c.type ? { type: view[c.path]!.type, bytes: view[c.path]!.bytes } : undefined;
          // A move also conflicts when the file it moved changed underneath.
          if (c.from !== undefined && !same(lowerBefore[c.from], lowerNow(c.from)) && lowerNow(c.from) !== undefined) return true;
          // A directory is made unguarded: a lower that now has nothing there loses nothing.
          if (c.type === 'directory' && lowerNow(c.path) === undefined) return false;
          const was = lowerBefore[c.path] ?? (typesBefore[c.path] ? { type: typesBefore[c.path]!.type } : undefined);
          return !same(was, lowerNow(c.path)) && !same(lowerNow(c.path), wanted);
        };
        // A conflicting move leaves its source in place, so a removed directory above the source
        // stays (a conflict), and so does what would appear inside it: until nothing is added.
        let dirs = conflictedDirs;
        let conflicting = changes.filter((c) => conflicts(c, dirs));
        for (;;) {
          // (the lower file a conflicting change would have removed first is still there below it).
          const below = (d: string, p: string | undefined) => p !== undefined && p.startsWith(`${d}/`) && lowerAfter[p] !== undefined;
          const more = removedDirs.filter(
            (d) => !dirs.includes(d) && conflicting.some((c) => below(d, c.from) || (c.kind !== 'deleted' && c.type === 'file' && below(d, c.path))),
          );
          // Nothing is made at or below the source of a conflicting move that is still in the lower.
          const stuck = conflicting.flatMap((c) => (c.from !== undefined && lowerAfter[c.from] !== undefined ? [c.from] : []));
          const waiting = changes.filter(
            (c) => !conflicting.includes(c) && c.kind !== 'deleted' && stuck.some((f) => c.path === f || c.path.startsWith(`${f}/`)),
          );
          if (more.length === 0 && waiting.length === 0) break;
          dirs = [...dirs, ...more];
          conflicting = [...new Set([...changes.filter((c) => conflicts(c, dirs)), ...waiting, ...conflicting])];
          conflicting = changes.filter((c) => conflicting.includes(c));
        }
        const expected = conflicting.map((c) => c.path);

        const result = await fs.commit();
        expect(result.conflicts.map((c) => c.path)).toEqual(expected);
        for (const c of result.conflicts) expect(c.code).toBe('FS_CONFLICT');
        // A failure is always explained by something changed or left behind above it.
        const blamed = [...touched, ...result.conflicts.map((c) => c.path), ...result.failed.map((c) => c.path)];
        for (const f of result.failed) {
          expect(blamed.some((b) => f.path.startsWith(`${b}/`)), `${f.path} failed with ${f.code}: ${f.message}`).toBe(true);
        }
        expect(await viewOf(fs)).toEqual(view);
        const lowerFinal = filesOf(await viewOf(lower, { dirVersions: false }));
        // (A removal at the same path, say of a file where a conflicting directory was to be made, may go through.)
        const removedToo = (path: string) =>
          changes.some((c) => ((c.path === path && c.kind === 'deleted') || c.from === path) && !conflicting.includes(c));
        for (const path of expected) if (!removedToo(path)) expect(lowerFinal[path], `conflicting ${path} was overwritten`).toEqual(lowerAfter[path]);
        // (A path can carry two changes, a removed directory and a file made there; check those fully committed.)
        const unfinished = new Set([...result.conflicts, ...result.failed].map((c) => c.path));
        for (const path of result.committed) if (!unfinished.has(path)) expect(lowerFinal[path]).toEqual(filesOf(view)[path]);
        expect((await fs.changes()).map((c) => c.path).sort()).toEqual([...expected, ...result.failed.map((f) => f.path)].sort());
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('discard of everything gives back exactly the lower', async () => {
    await fc.assert(
      fc.asyncProperty(lowerTreeArb, opsArb, async (tree, ops) => {
        const lower = createMemoryFs({ files: tree });
        const fs = await createOverlayFs({ lower });
        for (const op of ops) await runOp(fs, op);
        await fs.discard();
        expect(await fs.changes()).toEqual([]);
        expect(await viewOf(fs)).toEqual(await viewOf(lower));
      }),
      { numRuns: RUNS },
    );
  });

  it('partial commit and discard leave the rest of the view as it was', async () => {
    await fc.assert(
      fc.asyncProperty(lowerTreeArb, opsArb, fc.constantFrom('/d', '/a', '/e/g', '/n', '/l'), fc.boolean(), async (tree, ops, sel, commit) => {
        const lower = createMemoryFs({ files: tree });
        const fs = await createOverlayFs({ lower });
        for (const op of ops) await runOp(fs, op);
        const view = await viewOf(fs);
        const root = (await fs.resolve(sel)).targetKey;
        const selected = (key: string) => key === root || key.startsWith(`${root}/`);
        const keyOf = new Map<string, string>();
        for (const path of Object.keys(view)) keyOf.set(path, (await fs.resolve(path)).targetKey);
        const all = await fs.changes();
        const outside = all.filter((c) => !selected(c.path) && !(c.from !== undefined && selected(c.from)));
        if (commit) await fs.commit([sel]);
        else await fs.discard([sel]);
        const after = await fs.changes();
        const same = (x: OverlayChange, y: OverlayChange) => x.path === y.path && x.kind === y.kind && x.type === y.type;
        // A commit also takes the other end of a selected rename and a removed directory above
        // anything it publishes (see docs/overlay.md); nothing else outside the selection goes.
        // A discarded rename goes back as a whole: both its names.
        const partners = all.filter((c) => c.from !== undefined && (selected(c.path) || selected(c.from))).flatMap((c) => [c.path, c.from!]);
        const discarded = (key: string) => selected(key) || partners.includes(key);
        const taken = commit ? grownSelection(all, root) : discarded;
        const kept = outside.filter((c) => !(taken(c.path) || (c.from !== undefined && taken(c.from))));
        expect(after.filter((c) => kept.some((o) => same(o, c)))).toEqual(kept);
        for (const c of after.filter((c) => !kept.some((o) => same(o, c)))) {
          // A directory made for a discarded or committed file stays, as on any filesystem, now empty.
          const gone = [root, ...partners, ...all.filter((x) => taken(x.path) || (x.from !== undefined && taken(x.from))).map((x) => x.path)];
          expect(c.type === 'directory' && c.kind === 'added' && gone.some((k) => k === c.path || k.startsWith(`${c.path}/`)), JSON.stringify(c)).toBe(true);
        }
        const now = await viewOf(fs);
        const lowerView = await viewOf(lower);
        for (const [path, entry] of Object.entries(view)) {
          if (entry.type !== 'file') continue;
          // Committed or not selected: as before. Discarded: as in the lower.
          // (Below a directory the overlay still removes, a discarded file shows nothing: the lower is cut off there.)
          const key = keyOf.get(path)!;
          const cutOff = after.some((c) => c.type === 'directory' && c.kind !== 'added' && key.startsWith(`${c.path}/`));
          const want = commit || !discarded(key) ? entry : cutOff ? undefined : lowerView[path];
          expect(now[path], path).toEqual(want);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('an overlay reopened from its upper shows the same view and changes', async () => {
    await fc.assert(
      fc.asyncProperty(lowerTreeArb, opsArb, async (tree, ops) => {
        const lower = createMemoryFs({ files: tree });
        const upper = createMemoryFs();
        const fs = await createOverlayFs({ lower, upper });
        for (const op of ops) await runOp(fs, op);
        const reopened = await createOverlayFs({ lower, upper });
        expect(await viewOf(reopened)).toEqual(await viewOf(fs));
        expect(await reopened.changes()).toEqual(await fs.changes());
      }),
      { numRuns: RUNS },
    );
  });
  // Reopening from a state directory (and every other store): see store-kit.ts.
});
