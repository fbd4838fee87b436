import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHarness, type ToolResult } from '../../src/index.js';
import { createMemoryFs, type MemoryEntry } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, listOutputSchema, type FsToolsOptions, type ListValue } from '../../src/tools/index.js';

function harness(files: Record<string, MemoryEntry>, options: FsToolsOptions = {}) {
  const fs = createMemoryFs({ files, cwd: '/p' });
  const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools(options)] });
  const list = async (args: Record<string, unknown> = {}) => (await ctx.tools.execute('list', args, { owner: 's' })) as ToolResult<ListValue>;
  return { ctx, list };
}

const ok = (r: ToolResult<ListValue>): ListValue => {
  expect(r.isError, r.text).toBe(false);
  expect(listOutputSchema.safeParse(r.value).success).toBe(true);
  return r.value!;
};

describe('list', () => {
  it('shows a tree: directories first, then files with sizes, each by code point', async () => {
    const { list } = harness({
      '/p/b.txt': 'bb',
      '/p/A.md': 'a',
      '/p/src/z.ts': 'zzz',
      '/p/src/lib/x.ts': 'x',
      '/p/docs': null,
      '/p/.env.example': 'K=1\n',
    });
    const r = await list();
    ok(r);
    expect(r.text).toBe(['/p/', '  docs/', '  src/', '    lib/', '      x.ts (1 B)', '    z.ts (3 B)', '  .env.example (4 B)', '  A.md (1 B)', '  b.txt (2 B)'].join('\n'));
    expect(r.value!.entries.map((e) => e.path)).toEqual(['docs', 'src', 'src/lib', 'src/lib/x.ts', 'src/z.ts', '.env.example', 'A.md', 'b.txt']);
    expect(r.value!.entries.find((e) => e.path === 'b.txt')).toEqual({ path: 'b.txt', type: 'file', depth: 1, size: 2 });
  });

  it('honours .gitignore (nested, negated), skips VCS directories, and takes extra ignore globs', async () => {
    const { list } = harness({
      '/p/.git/HEAD': 'ref',
      '/p/.gitignore': 'node_modules/\n*.log\n!keep.log\n',
      '/p/node_modules/a/index.js': '',
      '/p/app.log': '',
      '/p/keep.log': '',
      '/p/src/.gitignore': 'gen/\n',
      '/p/src/gen/out.js': '',
      '/p/src/main.ts': '',
      '/p/fixtures/big.json': '',
    });
    const v = ok(await list({ ignore: ['fixtures'] }));
    expect(v.entries.map((e) => e.path)).toEqual(['src', 'src/.gitignore', 'src/main.ts', '.gitignore', 'keep.log']);
    // .git, node_modules, app.log, src/gen, fixtures
    expect(v.ignored).toBe(5);
    const r = await list({ ignore: ['src/*.ts'] });
    expect(r.value!.entries.map((e) => e.path)).not.toContain('src/main.ts');
  });

  it('reads .gitignore files above the listed directory, up to the repository', async () => {
    const { list } = harness({ '/p/.git': null, '/p/.gitignore': 'secret*\n', '/p/sub/secret.txt': '', '/p/sub/open.txt': '' });
    expect(ok(await list({ path: 'sub' })).entries.map((e) => e.path)).toEqual(['open.txt']);
  });

  it('stops at the depth limit and names the directories not expanded', async () => {
    const { list } = harness({ '/p/a/b/c/d.txt': '', '/p/a/b/c/e.txt': '', '/p/a/b/f.txt': '' }, { listMaxDepth: 2 });
    const r = await list();
    const v = ok(r);
    expect(v.entries).toEqual([
      { path: 'a', type: 'directory', depth: 1 },
      { path: 'a/b', type: 'directory', depth: 2, notExpanded: { reason: 'depth', entries: 2 } },
    ]);
    expect(r.text).toContain('    b/ (2 entries, not expanded)');
    expect(r.text).toContain('(1 directory below depth 2 not expanded; list one with path to see inside.)');
  });

  it('caps the entries breadth first and says what was left out and how to narrow', async () => {
    const files: Record<string, MemoryEntry> = {};
    for (let i = 0; i < 8; i++) files[`/p/big/f${i}.txt`] = '';
    files['/p/small/one.txt'] = '';
    for (let i = 0; i < 3; i++) files[`/p/top${i}.txt`] = '';
    const { list } = harness(files, { listMaxEntries: 7 });
    const r = await list();
    const v = ok(r);
    expect(v.entries.map((e) => e.path)).toEqual(['big', 'small', 'small/one.txt', 'top0.txt', 'top1.txt', 'top2.txt']);
    expect(v.entries[0]).toMatchObject({ notExpanded: { reason: 'limit', entries: 8 } });
    expect(v).toMatchObject({ total: 14, omitted: 8, rootOmitted: 0 });
    expect(r.text).toContain('(Showing 6 of 14 entries. Not shown: big/ (8 entries). List a subdirectory with path, or leave entries out with ignore, to see the rest.)');

    const tight = ok(await harness(files, { listMaxEntries: 3 }).list());
    expect(tight.entries.map((e) => e.path)).toEqual(['big', 'small', 'top0.txt']);
    expect(tight.rootOmitted).toBe(2);
  });

  it('shows links to directories unfollowed and dangling or looping links as other, never failing', async () => {
    const { list } = harness({
      '/p/real/x.txt': 'x',
      '/p/to-real': { symlink: '/p/real' },
      '/p/dangling': { symlink: '/p/nowhere' },
      '/p/loop': { symlink: '/p/loop' },
    });
    const r = await list();
    const v = ok(r);
    expect(v.entries).toEqual([
      { path: 'real', type: 'directory', depth: 1 },
      { path: 'real/x.txt', type: 'file', depth: 2, size: 1 },
      { path: 'to-real', type: 'directory', depth: 1, link: true },
      { path: 'dangling', type: 'other', depth: 1 },
      { path: 'loop', type: 'other', depth: 1 },
    ]);
    expect(r.text).toContain('  to-real/ (symlink, not followed)');
    expect(r.text).toContain('  dangling (other: special file or broken link)');
  });

  it('refuses a file, a missing path and a negated ignore with FsError codes', async () => {
    const { list } = harness({ '/p/a.txt': 'a' });
    expect((await list({ path: 'a.txt' })).error?.code).toBe('FS_NOT_DIRECTORY');
    expect((await list({ path: 'nope' })).error?.code).toBe('FS_NOT_FOUND');
    const neg = await list({ ignore: ['!x'] });
    expect(neg.error?.code).toBe('FS_INVALID_ARGUMENT');
    expect(neg.text).toContain('negation');
    expect(ok(await list({ path: null, ignore: null })).entries).toHaveLength(1);
  });

  it('says when the walk stopped early', async () => {
    const files: Record<string, MemoryEntry> = {};
    for (let i = 0; i < 20; i++) files[`/p/node_modules/m${i}.js`] = '';
    files['/p/.gitignore'] = 'node_modules\n';
    const v = ok(await harness(files, { listMaxScan: 10 }).list());
    expect(v.stopped).toEqual({ scanned: 10 });
  });

  it('property: every shown entry exists, is not ignored, respects the caps, and siblings are directories first by code point', async () => {
    const name = fc.constantFrom('a', 'b', 'B', 'é', '_x', 'z1', '.h');
    const tree = fc.dictionary(fc.array(name, { minLength: 1, maxLength: 4 }).map((s) => s.join('/')), fc.constant('x'), { maxKeys: 25 });
    await fc.assert(
      fc.asyncProperty(tree, fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 4 }), async (paths, maxEntries, maxDepth) => {
        // A path that is also a prefix of another is a directory; keep only leaves as files.
        const keys = Object.keys(paths).filter((p) => !Object.keys(paths).some((q) => q.startsWith(`${p}/`)));
        const files = Object.fromEntries(keys.map((k) => [`/p/${k}`, 'x']));
        const { list } = harness(files, { listMaxEntries: maxEntries, listMaxDepth: maxDepth });
        const v = ok(await list());
        expect(v.entries.length).toBeLessThanOrEqual(maxEntries);
        expect(v.entries.length + v.omitted).toBe(v.total);
        const all = new Set<string>();
        for (const k of keys) {
          const parts = k.split('/');
          for (let i = 1; i <= parts.length; i++) all.add(parts.slice(0, i).join('/'));
        }
        for (const e of v.entries) {
          expect(all.has(e.path)).toBe(true);
          expect(e.depth).toBe(e.path.split('/').length);
          expect(e.depth).toBeLessThanOrEqual(maxDepth);
        }
        // Siblings in order.
        const byParent = new Map<string, typeof v.entries>();
        for (const e of v.entries) {
          const parent = e.path.includes('/') ? e.path.slice(0, e.path.lastIndexOf('/')) : '';
          byParent.set(parent, [...(byParent.get(parent) ?? []), e]);
        }
        for (const siblings of byParent.values()) {
          const key = (e: (typeof siblings)[number]) => `${e.type === 'directory' ? 0 : 1}`;
          const sorted = [...siblings].sort((a, b) => key(a).localeCompare(key(b)) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
          expect(siblings.map((s) => s.path)).toEqual(sorted.map((s) => s.path));
        }
        // Uncapped, everything within the depth is shown.
        if (v.omitted === 0) expect(v.entries.length).toBe([...all].filter((p) => p.split('/').length <= maxDepth).length);
      }),
      { numRuns: 60 },
    );
  });
});
