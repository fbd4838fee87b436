import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FsTargetKey, comparePaths, treeWalk, type FsWalkEntry } from '../../src/index.js';
import { walkBatches } from '../../src/seam/index.js';

const name = fc.constantFrom('a', 'b', 'a-b', 'a.b', 'B', 'é', '😀', 'ａ');
/** A tree as its paths (every ancestor present), each a directory or a file. */
const tree = fc.uniqueArray(fc.array(name, { minLength: 1, maxLength: 3 }).map((s) => s.join('/')), { maxLength: 16 }).map((paths) => {
  const all = new Set<string>();
  for (const p of paths) {
    const parts = p.split('/');
    for (let i = 1; i <= parts.length; i++) all.add(parts.slice(0, i).join('/'));
  }
  return [...all].map((path): FsWalkEntry => {
    const isDir = [...all].some((q) => q.startsWith(`${path}/`));
    return { name: path.slice(path.lastIndexOf('/') + 1), type: isDir ? 'directory' : 'file', target: { targetKey: FsTargetKey(`/t/${path}`), displayPath: `/t/${path}` }, path };
  });
});

describe('treeWalk', () => {
  it('yields a tree given in any order in walk order, each run ending at a directory (property)', async () => {
    await fc.assert(
      fc.asyncProperty(tree, fc.boolean(), async (entries, reverse) => {
        const given = reverse ? [...entries].reverse() : [...entries].sort((x, y) => (x.path < y.path ? -1 : 1));
        const runs: (readonly FsWalkEntry[])[] = [];
        for await (const run of walkBatches(treeWalk(async () => [...given]))) runs.push(run);
        const flat = runs.flat().map((e) => e.path);
        expect(flat).toEqual(entries.map((e) => e.path).sort(comparePaths));
        for (const run of runs.slice(0, -1)) expect(run.at(-1)!.type).toBe('directory');
        for (const run of runs) expect(run.slice(0, -1).every((e) => e.type !== 'directory')).toBe(true);
        const plain: string[] = [];
        for await (const e of treeWalk(async () => [...given])) plain.push(e.path);
        expect(plain).toEqual(flat);
      }),
    );
  });

  it('builds the entries of a fetched tree only as it hands them over, in the same order', async () => {
    await fc.assert(
      fc.asyncProperty(tree, async (entries) => {
        const given = [...entries].reverse();
        const built: number[] = [];
        const fetched = { paths: given.map((e) => e.path), entry: (i: number) => (built.push(i), given[i]!) };
        const walk = walkBatches(treeWalk(async () => fetched))[Symbol.asyncIterator]();
        const first = await walk.next();
        if (first.done) {
          expect(entries).toEqual([]);
          return;
        }
        expect(built.length).toBe(first.value.length);
        const rest: FsWalkEntry[] = [];
        for (let next = await walk.next(); !next.done; next = await walk.next()) rest.push(...next.value);
        expect([...first.value, ...rest].map((e) => e.path)).toEqual(entries.map((e) => e.path).sort(comparePaths));
        expect(built.length).toBe(entries.length);
      }),
    );
  });

  it('takes a walk instead when load gives one', async () => {
    const entry: FsWalkEntry = { name: 'x', type: 'file', target: { targetKey: FsTargetKey('/t/x'), displayPath: '/t/x' }, path: 'x' };
    const seen: string[] = [];
    for await (const e of treeWalk(async () => (async function* () { yield entry; })())) seen.push(e.path);
    expect(seen).toEqual(['x']);
  });
});

describe('walk: the narrow hint', () => {
  it('is checked: names without "/" and a leftOut function, else FS_INVALID_ARGUMENT', async () => {
    const { createMemoryFs } = await import('../../src/backends/memory/index.js');
    const fs = createMemoryFs();
    const top = await fs.resolve('/');
    await fs.writeText(await fs.resolve('/a.ts'), 'x');
    const bad = [{ fileNameEndsWith: [], leftOut: () => {} }, { fileNameEndsWith: ['a/b'], leftOut: () => {} }, { fileNameEndsWith: ['.ts'] }, { fileNameEndsWith: [''], leftOut: () => {} }];
    for (const narrow of bad) {
      const walked = (async () => {
        for await (const _ of fs.walk(top, { narrow: narrow as never })) void _;
      })();
      await expect(walked).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    }
    // A provider may ignore it: memory hands over every entry.
    const names: string[] = [];
    for await (const e of fs.walk(top, { narrow: { fileNameEndsWith: ['.md'], leftOut: () => {} } })) names.push(e.name);
    expect(names).toEqual(['a.ts']);
  });
});
