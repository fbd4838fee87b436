import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createFs, VCS_DIRECTORIES, type FileSystem, type FsProvider } from '../../src/index.js';
import { createPostgresFs, type PgQueryable } from '../../src/backends/postgres/index.js';
import { glob, type GlobOptions, type GlobResult } from '../../src/search/index.js';
import { SERVER, closeShared, newWorkspace, sharedPglite, sharedPool } from './helpers.js';

/** The same store without the provider's bulk walk: the seam walks it by listDir, a query per directory. */
function byListing(provider: FsProvider): FileSystem {
  const { walk: _walk, ...rest } = provider;
  return createFs(rest as FsProvider);
}

const outcome = (r: GlobResult) => ({
  cwd: r.cwd,
  matches: r.matches.map((m) => ({ path: m.path, key: m.target.targetKey, type: m.type, size: m.size, mtimeMs: m.mtimeMs })),
  truncated: r.truncated,
  skippedCounts: r.skippedCounts,
  skipped: r.skipped.map((k) => `${k.path}:${k.reason}:${k.code ?? ''}`),
});

const SUBJECTS: [string, () => Promise<PgQueryable> | PgQueryable][] = [
  ['PGlite', sharedPglite],
  ...(SERVER === undefined ? [] : ([['server', sharedPool]] as [string, () => PgQueryable][])),
];

afterAll(closeShared);

const dir = fc.constantFrom('', 'a', 'b', 'a/c', '.git', 'a/.git', 'a-b', 'é', '😀', 'a/c/d');
const name = fc.constantFrom('x.ts', 'y.md', '.h', 'z', 'a', '😀.ts', 'a.ts', '.gitignore', 'HEAD');
const linkText = fc.constantFrom('a', '../a', '/w/b', '/w', 'missing', '.', '..', 'x.ts', '../../outside', '/elsewhere', 'a/c', '../b/x.ts');
const node = fc.oneof(
  fc.record({ kind: fc.constant('file' as const), dir, name, size: fc.nat(40), executable: fc.boolean() }),
  fc.record({ kind: fc.constant('dir' as const), dir, name }),
  fc.record({ kind: fc.constant('link' as const), dir, name, text: linkText }),
);
const piece = fc.constantFrom('**', '*', '*.ts', 'a', 'a*', '?', '.git', '*.{ts,md}', '{a,b}', 'c', '😀*', 'x.ts', '.*');
const pattern = fc.oneof(
  fc.constantFrom('**', '**/*', '**/*.ts', 'a/**', '**/.git/**', '*', '**/a*/**', '**/😀*'),
  fc.array(piece, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/')),
);
const options = fc.record(
  {
    cwd: fc.constantFrom('/w', '/w', '/w', '/w/a', '/w/b', '/w/la', 'missing'),
    dot: fc.boolean(),
    matchBase: fc.boolean(),
    onlyFiles: fc.boolean(),
    ignore: fc.constantFrom([], ['**/a'], ['a/**'], VCS_DIRECTORIES.flatMap((d) => [`**/${d}`, `**/${d}/**`]), ['**/*.md']),
    limit: fc.integer({ min: 1, max: 30 }),
    maxEntries: fc.integer({ min: 1, max: 60 }),
    stats: fc.boolean(),
  },
  { requiredKeys: ['cwd'] },
);

type Node = typeof node extends fc.Arbitrary<infer T> ? T : never;

/** `nodes` made below /w (whatever cannot be made, a parent being a file or the name taken, is left out), and a link /w/la to a. */
async function build<F extends FileSystem>(fs: F, nodes: readonly Node[]): Promise<F> {
  for (const d of ['a/c', 'b']) await fs.mkdir(await fs.resolve(`/w/${d}`));
  for (const n of nodes) {
    const path = `/w/${n.dir === '' ? '' : `${n.dir}/`}${n.name}`;
    const t = await fs.resolve(path, { noFollow: true }).catch(() => undefined);
    if (t === undefined) continue;
    if (n.kind === 'file') {
      await fs.writeBytes(t, Buffer.alloc(n.size, 'x')).catch(() => undefined);
      if (n.executable) await fs.setExecutable?.(t, true).catch(() => undefined);
    } else if (n.kind === 'dir') await fs.mkdir(t).catch(() => undefined);
    else await fs.symlink!(t, n.text).catch(() => undefined);
  }
  await fs.symlink!(await fs.resolve('/w/la', { noFollow: true }), 'a').catch(() => undefined);
  return fs;
}

describe.each(SUBJECTS)('glob over PostgreSQL with its bulk walk, over %s', (_label, getClient) => {
  it('gives the same matches, order, stats, caps and skips as the walk by listings (property)', async () => {
    const client = await getClient();
    await fc.assert(
      fc.asyncProperty(fc.array(node, { minLength: 4, maxLength: 20 }), fc.array(pattern, { minLength: 1, maxLength: 2 }), options, fc.boolean(), async (nodes, patterns, opts, confined) => {
        const fs = await build(createPostgresFs({ client, workspace: newWorkspace('glob-pushdown'), ...(confined ? { root: '/w' } : {}) }), nodes);
        const globOpts: GlobOptions = { ...opts, cwd: opts.cwd === 'missing' ? '/w/missing' : opts.cwd };
        const settle = (p: Promise<GlobResult>) => p.then(outcome, (err: { code?: string }) => `error ${err.code}`);
        const pushed = await settle(glob(fs, patterns, globOpts));
        const plain = await settle(glob(byListing(fs.provider), patterns, globOpts));
        expect(pushed).toEqual(plain);
      }),
      { numRuns: 80 },
    );
  });

  it('a pattern naming a file ending leaves the other files in the database, with the same entry cap (property)', async () => {
    const client = await getClient();
    const texts: string[] = [];
    const spied: PgQueryable = { query: (text, values) => (texts.push(text), client.query(text, values)) };
    const endings = fc.constantFrom('**/*.ts', '*.ts', 'a/*.md', '**/*.h', '**/*.ts/**/*.md', '*.a_b');
    await fc.assert(
      fc.asyncProperty(fc.array(node, { minLength: 4, maxLength: 20 }), fc.array(endings, { minLength: 1, maxLength: 2 }), fc.integer({ min: 1, max: 30 }), fc.boolean(), async (nodes, patterns, maxEntries, matchBase) => {
        const fs = await build(createPostgresFs({ client: spied, workspace: newWorkspace('glob-narrow') }), nodes);
        const opts: GlobOptions = { cwd: '/w', maxEntries, matchBase };
        texts.length = 0;
        const pushed = outcome(await glob(fs, patterns, opts));
        expect(texts.some((t) => t.includes('LIKE ANY'))).toBe(true);
        expect(pushed).toEqual(outcome(await glob(byListing(fs.provider), patterns, opts)));
      }),
      { numRuns: 60 },
    );
  });

  it('walks a subtree in one query, whatever its size', async () => {
    const client = await getClient();
    let queries = 0;
    const counted: PgQueryable = {
      query: (text, values) => {
        queries++;
        return client.query(text, values);
      },
    };
    const fs = createPostgresFs({ client: counted, workspace: newWorkspace('glob-queries') });
    for (let i = 0; i < 30; i++) await fs.writeBytes(await fs.resolve(`/t/d${i % 3}/e${i % 5}/f${i}.ts`), Buffer.from('x'));
    const resolved = await fs.resolve('/t');
    queries = 0;
    const walked: string[] = [];
    for await (const e of fs.walk(resolved)) walked.push(e.path);
    expect(queries).toBe(1);
    expect(walked.length).toBe(3 + 15 + 30);
    const r = await glob(fs, '**/*.ts', { cwd: '/t' });
    expect(r.matches.map((m) => m.path)).toEqual((await glob(byListing(fs.provider), '**/*.ts', { cwd: '/t' })).matches.map((m) => m.path));
    expect(r.matches).toHaveLength(30);
  });
});
