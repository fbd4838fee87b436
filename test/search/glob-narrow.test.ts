import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import type { FileSystem, FsWalkOptions } from '../../src/seam/index.js';
import { glob, type GlobOptions, type GlobResult } from '../../src/search/index.js';

/*
 * Glob gives a walk the `narrow` hint when every pattern ends in `*SUFFIX`; memory and local then
 * leave other files out of their listings. The results, the entry cap included, must be those of
 * the same glob over a walk that is never narrowed.
 */

/** `fs` whose walk drops the hint: what glob sees from a provider that ignores it. */
function unnarrowed(fs: FileSystem): FileSystem {
  return Object.assign(Object.create(fs) as FileSystem, {
    walk: (target: Parameters<FileSystem['walk']>[0], opts?: FsWalkOptions) => fs.walk(target, { ...opts, narrow: undefined }),
  });
}

const outcome = (r: GlobResult) => ({
  matches: r.matches.map((m) => ({ path: m.path, type: m.type, size: m.size })),
  truncated: r.truncated,
  ignored: r.ignored,
  skippedCounts: r.skippedCounts,
});

const dir = fc.constantFrom('', 'a', 'b', 'a/c', 'a/c/d', '.h', 'x.ts');
const name = fc.constantFrom('x.ts', 'y.md', 'z.test.ts', '.ts', 'ts', 'a.tsx', 'b.h', 'README');
const tree = fc.uniqueArray(fc.tuple(dir, name).map(([d, n]) => (d === '' ? n : `${d}/${n}`)), { minLength: 1, maxLength: 25 });
const patterns = fc.array(fc.constantFrom('**/*.ts', '*.ts', 'a/**/*.md', '**/*.test.ts', 'a/*.h', '**/*s', '**/*', '**/x.ts'), { minLength: 1, maxLength: 2 });
const options = fc.record({ maxEntries: fc.integer({ min: 1, max: 40 }), limit: fc.integer({ min: 1, max: 30 }), matchBase: fc.boolean(), stats: fc.boolean() });

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});

/** The tree in a fresh filesystem; paths that cannot be made (a file where a directory goes) are left out. */
async function build(kind: 'memory' | 'local', paths: readonly string[]): Promise<{ fs: FileSystem; top: string }> {
  let fs: FileSystem;
  let top = '/';
  if (kind === 'memory') fs = createMemoryFs();
  else {
    top = await mkdtemp(join(tmpdir(), 'dsh-fs-narrow-'));
    roots.push(top);
    fs = createLocalFs({ root: top });
  }
  for (const p of paths) await fs.writeText(await fs.resolve(join(top, p)), p).catch(() => undefined);
  return { fs, top };
}

describe.each(['memory', 'local'] as const)('glob narrowed on %s', (kind) => {
  it('gives the same matches, caps and counts as without the hint (property)', async () => {
    await fc.assert(
      fc.asyncProperty(tree, patterns, options, async (paths, pats, opts) => {
        const { fs, top } = await build(kind, paths);
        const o: GlobOptions = { cwd: top, ...opts };
        expect(outcome(await glob(fs, pats, o))).toEqual(outcome(await glob(unnarrowed(fs), pats, o)));
      }),
      { numRuns: 80 },
    );
  });

  it('reads the ignore files a narrowed walk would otherwise leave out (property)', async () => {
    const rules = fc.constantFrom('c/\n', '*.test.ts\n', 'a/\n!x.ts\n', 'x.ts\n', '*.ts\n!a/**\n');
    const placed = fc.array(fc.tuple(fc.constantFrom('', 'a', 'a/c'), rules), { minLength: 1, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(tree, placed, patterns, async (paths, ignoreFiles, pats) => {
        const { fs, top } = await build(kind, paths);
        for (const [d, text] of ignoreFiles) await fs.writeText(await fs.resolve(join(top, d, '.gitignore')), text).catch(() => undefined);
        const narrowed = await glob(fs, pats, { cwd: top });
        expect(outcome(narrowed)).toEqual(outcome(await glob(unnarrowed(fs), pats, { cwd: top })));
        const all = await glob(fs, pats, { cwd: top, gitignore: false });
        expect(narrowed.matches.length + narrowed.ignored).toBe(all.matches.length);
      }),
      { numRuns: 60 },
    );
  });

  it('leaves out the files of other endings, and says how many', async () => {
    const { fs, top } = await build(kind, ['p/a/x.ts', 'p/a/y.md', 'p/a/z.md', 'p/a/c/w.ts', 'p/a/c/v.json']);
    const left: number[] = [];
    const names: string[] = [];
    for await (const e of fs.walk(await fs.resolve(join(top, 'p')), { narrow: { fileNameEndsWith: ['.ts'], leftOut: (n) => left.push(n) } })) names.push(e.path);
    expect(names).toEqual(['a', 'a/c', 'a/c/w.ts', 'a/x.ts']);
    expect(left.reduce((a, b) => a + b, 0)).toBe(3);
  });
});
