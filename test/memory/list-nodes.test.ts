import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plantTree } from './plant-tree.js';
import { Volume } from 'memfs';
import { dirChildren, type NodeStat } from '../../src/backends/memory/lookup.js';

// The memory provider lists a directory from memfs's nodes (dirChildren) instead of a readdir and
// an lstat per entry; where it does, it must report what those report, and it must decline (so
// memfs answers, refusal included) wherever either would refuse or the path is not plainly there.

const NAMES = ['a', 'b', 'c', 'B', 'a.b'] as const;
const entry = fc.oneof(
  fc.record({ kind: fc.constant('dir' as const), mode: fc.constantFrom(0o755, 0o755, 0o644, 0o311, 0o000) }),
  fc.record({ kind: fc.constant('file' as const), size: fc.nat(40), mode: fc.constantFrom(0o644, 0o755, 0o600) }),
  fc.record({ kind: fc.constant('link' as const), to: fc.constantFrom('a', '../b', '/t/c', 'missing') }),
);
const tree = fc.dictionary(fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((s) => s.join('/')), entry, { maxKeys: 12 });
const dirPath = fc.array(fc.constantFrom(...NAMES), { maxLength: 3 }).map((s) => (s.length === 0 ? '/t' : `/t/${s.join('/')}`));

const shape = (st: NodeStat | { isSymbolicLink(): boolean; isFile(): boolean; isDirectory(): boolean; size: unknown; mode: unknown; mtimeMs: unknown }) => ({
  link: st.isSymbolicLink(),
  file: st.isFile(),
  dir: st.isDirectory(),
  size: Number(st.size),
  mode: Number(st.mode),
  mtimeMs: Number(st.mtimeMs),
});

describe('memory listing from memfs nodes', () => {
  it('equals readdir and an lstat of each entry, or declines (property)', () => {
    let answered = 0;
    fc.assert(
      fc.property(tree, dirPath, (entries, dir) => {
        const vol = Volume.fromJSON({}, '/');
        plantTree(vol, entries);
        const ids = { vol, uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
        const fast = dirChildren(ids, dir);
        let want: { name: string; stat: ReturnType<typeof shape> }[] | string;
        try {
          if (String(vol.realpathSync(dir)) !== dir) want = 'not plainly there';
          else want = (vol.readdirSync(dir) as string[]).map((name) => ({ name, stat: shape(vol.lstatSync(`${dir}/${name}`)) }));
        } catch (err) {
          want = `refused ${(err as { code?: string }).code}`;
        }
        // Declining is always allowed: memfs then answers, refusal included.
        if (fast === undefined) return;
        answered++;
        // In any order: the seam orders listings.
        const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
        expect(fast.map(({ name, stat }) => ({ name, stat: shape(stat) })).sort(byName), dir).toEqual(typeof want === 'string' ? want : [...want].sort(byName));
      }),
      { numRuns: 400 },
    );
    // The nodes answered often enough to be compared (a plain searchable directory is common).
    expect(answered).toBeGreaterThan(40);
  });
});
