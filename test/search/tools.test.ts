import { mkdir, mkdtemp, realpath, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs, type MemoryFileSystem, type MemoryTree } from '../../src/backends/memory/index.js';
import { createHarness } from '../../src/harness/index.js';
import { fsTools, renderGlob, renderGrep, searchToolDefinitions, searchTools } from '../../src/tools/index.js';

const owner = 'agent';

function setup(files: MemoryTree, options: { cwd?: string; mtimes?: Record<string, number> } = {}) {
  const fs = createMemoryFs({ cwd: '/p', files });
  for (const [path, ms] of Object.entries(options.mtimes ?? {})) {
    const abs = path.startsWith('/') ? path : `/p/${path}`;
    fs.provider.volume.utimesSync(abs, ms / 1000, ms / 1000);
  }
  const ctx = createHarness({ fs, plugins: [fsTools(), searchTools()], ...(options.cwd ? { cwd: options.cwd } : {}) });
  return { fs, ctx };
}

const run = (ctx: ReturnType<typeof setup>['ctx'], name: string, args: unknown, signal?: AbortSignal) =>
  ctx.tools.execute(name, args, { owner, ...(signal ? { signal } : {}) });

describe('registration', () => {
  it('lists glob and grep beside the file tools, with strict JSON schemas', () => {
    const { ctx } = setup({});
    const listed = ctx.tools.list();
    expect(listed.map((t) => t.name)).toEqual(['read', 'write', 'edit', 'list', 'glob', 'grep']);
    const glob = listed.find((t) => t.name === 'glob')!;
    expect(glob.inputSchema).toMatchObject({ type: 'object', required: ['pattern'], additionalProperties: false });
    expect(Object.keys(glob.inputSchema.properties as object)).toEqual(['pattern', 'path', 'gitignore']);
    const grep = listed.find((t) => t.name === 'grep')!;
    expect(grep.inputSchema).toMatchObject({ type: 'object', required: ['pattern'], additionalProperties: false });
    expect(Object.keys(grep.inputSchema.properties as object)).toEqual(['pattern', 'path', 'include']);
    expect(searchToolDefinitions().map((d) => d.name)).toEqual(['glob', 'grep']);
  });

  it('works without the file tools, and refuses a second registration', () => {
    const fs = createMemoryFs();
    const ctx = createHarness({ fs, plugins: [searchTools()] });
    expect(ctx.tools.list().map((t) => t.name)).toEqual(['glob', 'grep']);
    expect(() => ctx.use(searchTools())).toThrow(/already applied/);
  });

  it('rejects unknown keys and malformed include globs with a clear message', async () => {
    const { ctx } = setup({ 'a.ts': 'x' });
    const unknown = await run(ctx, 'glob', { pattern: '*', recursive: true });
    expect(unknown).toMatchObject({ isError: true, error: { code: 'FS_INVALID_ARGUMENT' } });
    expect(unknown.text).toMatch(/unknown argument "recursive"; allowed arguments: pattern, path, gitignore/);
    const negated = await run(ctx, 'grep', { pattern: 'x', include: '!*.ts' });
    expect(negated.text).toMatch(/include.*negation/);
    const list = await run(ctx, 'grep', { pattern: 'x', include: '*.ts,*.js' });
    expect(list.text).toMatch(/not a comma-separated list \(use \{a,b\}/);
    expect((await run(ctx, 'grep', { pattern: 'x', include: '*.{ts,js}' })).isError).toBe(false);
    expect((await run(ctx, 'grep', { pattern: '' })).isError).toBe(true);
  });
});

describe('glob tool', () => {
  it('lists newest first, then by path, relative to the working directory', async () => {
    const { ctx } = setup(
      { 'old.ts': '1', 'new.ts': '2', 'src/mid.ts': '3', 'src/tie-b.ts': '4', 'src/tie-a.ts': '5' },
      { mtimes: { 'old.ts': 1_000_000, 'new.ts': 3_000_000, 'src/mid.ts': 2_000_000, 'src/tie-a.ts': 1_500_000, 'src/tie-b.ts': 1_500_000 } },
    );
    const r = await run(ctx, 'glob', { pattern: '*.ts' });
    expect(r.text).toBe(['new.ts', 'src/mid.ts', 'src/tie-a.ts', 'src/tie-b.ts', 'old.ts'].join('\n'));
  });

  it('includes hidden files but not ignored ones (counted) or VCS directories; files only', async () => {
    const { ctx } = setup({ '.gitignore': 'gen/\n', 'gen/a.js': '', '.hidden/b.js': '', '.git/c.js': '', 'd/e.js': '' }, { mtimes: {} });
    const r = await run(ctx, 'glob', { pattern: '**' });
    expect(r.text.split('\n\n')[0]!.split('\n').sort()).toEqual(['.gitignore', '.hidden/b.js', 'd/e.js']);
    expect(r.text).toMatch(/\(1 more file matched but is excluded by \.gitignore; set gitignore to false to include them\.\)$/);
    const all = await run(ctx, 'glob', { pattern: '**', gitignore: false });
    expect(all.text.split('\n').sort()).toEqual(['.gitignore', '.hidden/b.js', 'd/e.js', 'gen/a.js']);
  });

  it('glob("**/*.js") leaves out an ignored node_modules and says how many it left out', async () => {
    const files: Record<string, string> = { '.gitignore': 'node_modules/\n', 'src/a.js': '', 'index.js': '' };
    for (let i = 0; i < 7; i++) files[`node_modules/pkg${i}/index.js`] = '';
    files['node_modules/pkg0/lib/deep.js'] = '';
    const { ctx } = setup(files, { mtimes: {} });
    const r = await run(ctx, 'glob', { pattern: '**/*.js' });
    expect(r.value).toMatchObject({ total: 2, ignored: 8 });
    expect(r.text).toBe('index.js\nsrc/a.js\n\n(8 more files matched but are excluded by .gitignore; set gitignore to false to include them.)');
    expect((await run(ctx, 'glob', { pattern: '**/*.js', gitignore: false })).value).toMatchObject({ total: 10, ignored: 0 });
    // As in grep, the rules apply below an ignored directory named as the one to search.
    expect((await run(ctx, 'glob', { pattern: '*.js', path: 'node_modules/pkg0' })).value).toMatchObject({ total: 0, ignored: 2 });
    // The repository's exclude file counts too.
    const excluded = setup({ '.git/info/exclude': 'src/\n', 'src/a.js': '', 'b.js': '' }, { mtimes: {} });
    expect((await run(excluded.ctx, 'glob', { pattern: '**/*.js' })).value).toMatchObject({ total: 1, ignored: 1 });
  });

  it('glob and grep refuse alike to start inside a version-control directory, which both skip', async () => {
    const { ctx } = setup({ '.git/config': 'needle', 'src/a.ts': 'needle' });
    for (const [tool, args] of [['glob', { pattern: '*', path: '.git' }], ['grep', { pattern: 'needle', path: '.git/config' }], ['grep', { pattern: 'needle', path: '/p/.git' }]] as const) {
      const r = await run(ctx, tool, args);
      expect(r.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(r).toMatchObject({ error: { code: 'FS_INVALID_ARGUMENT' } });
      expect(r.text).toContain(`inside a version-control directory (.git), which ${tool} skips`);
    }
    expect((await run(ctx, 'grep', { pattern: 'needle', path: 'src' })).text).toContain('a.ts');
  });

  it('over the cap, the page is spread over the top-level directories, not only the newest', async () => {
    // 140 new files in big/, 10 old ones in each of a/ and b/: the newest 100 would all be big/.
    const names = [...Array.from({ length: 140 }, (_, i) => `big/f${i}.ts`), ...Array.from({ length: 10 }, (_, i) => `a/f${i}.ts`), ...Array.from({ length: 10 }, (_, i) => `b/f${i}.ts`)];
    const files = Object.fromEntries(names.map((n) => [n, '']));
    const mtimes = Object.fromEntries(names.map((n, i) => [n, n.startsWith('big/') ? 2_000_000 + i * 1000 : 1_000_000 + i]));
    const { ctx } = setup(files, { mtimes });
    const r = await run(ctx, 'glob', { pattern: '**/*.ts' });
    const [page, footer] = r.text.split('\n\n');
    const shown = page!.split('\n');
    expect(shown).toHaveLength(100);
    expect(shown.filter((p) => p.startsWith('a/'))).toHaveLength(10);
    expect(shown.filter((p) => p.startsWith('b/'))).toHaveLength(10);
    expect(footer).toBe(
      '(Showing 100 of 160 paths: a sample from each of the 3 top-level directories, newest first within each. ' +
        'Matches per directory: big (140), a (10), b (10). Narrow pattern or path to one of them (e.g. path "big") to see the rest.)',
    );
    expect(r.value).toMatchObject({ total: 160, spread: [{ dir: 'big', count: 140 }, { dir: 'a', count: 10 }, { dir: 'b', count: 10 }] });
  });

  it('shows 100 paths and says how many there are and how to narrow', async () => {
    const files = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`f${String(i).padStart(3, '0')}.txt`, '']));
    const mtimes = Object.fromEntries(Object.keys(files).map((f, i) => [f, 1_000_000 + i * 1000]));
    const { ctx } = setup(files, { mtimes });
    const r = await run(ctx, 'glob', { pattern: '*.txt' });
    const [page, footer] = r.text.split('\n\n');
    expect(page!.split('\n')).toHaveLength(100);
    expect(page!.split('\n')[0]).toBe('f149.txt');
    expect(footer).toBe('(Showing 100 of 150 paths, newest first. Narrow pattern (a subdirectory or an extension) or path to see the rest.)');
    expect(r.value).toMatchObject({ total: 150 });
  });

  it('says when the search itself stopped early', async () => {
    const files = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}.txt`, '']));
    const fs = createMemoryFs({ cwd: '/p', files });
    const ctx = createHarness({ fs, plugins: [searchTools({ globMaxResults: 5, globMaxCollect: 10 })] });
    const r = await run(ctx, 'glob', { pattern: '*' });
    expect(r.text.split('\n\n')[0]!.split('\n')).toHaveLength(5);
    expect(r.text).toMatch(/\(Showing 5 of more than 10 paths: the search stopped after 10 matches, so this page is not the newest of all matches\. Narrow pattern/);
  });

  it('searches a given directory; paths outside the working directory stay absolute', async () => {
    const { ctx } = setup({ 'a/x.ts': '', 'b/y.ts': '' }, { cwd: '/p/a' });
    expect((await run(ctx, 'glob', { pattern: '*.ts' })).text).toBe('x.ts');
    expect((await run(ctx, 'glob', { pattern: '*.ts', path: '../b' })).text).toBe('/p/b/y.ts');
    expect((await run(ctx, 'glob', { pattern: '*.ts', path: '/p' })).text.split('\n').sort()).toEqual(['/p/b/y.ts', 'x.ts']);
  });

  it('answers "No files found", and errors carry codes', async () => {
    const { ctx } = setup({ 'a.ts': '' });
    expect((await run(ctx, 'glob', { pattern: '*.rs' })).text).toBe('No files found');
    expect(await run(ctx, 'glob', { pattern: '*', path: 'a.ts' })).toMatchObject({ isError: true, error: { code: 'FS_NOT_DIRECTORY' } });
    expect(await run(ctx, 'glob', { pattern: '*', path: 'nope' })).toMatchObject({ isError: true, error: { code: 'FS_NOT_FOUND' } });
    const ac = new AbortController();
    ac.abort();
    expect(await run(ctx, 'glob', { pattern: '*' }, ac.signal)).toMatchObject({ isError: true, error: { code: 'FS_ABORTED' } });
  });

  it('orders newest first on local disk too, and respects .gitignore in glob and grep', async () => {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'dsh-fs-search-')));
    try {
      const files: [string, string, number][] = [
        ['a.ts', 'foo', 1_000],
        ['src/b.ts', 'foo', 3_000],
        ['gen/c.ts', 'foo', 2_000],
        ['.gitignore', 'gen/\n', 500],
      ];
      for (const [rel, body, s] of files) {
        await mkdir(dirname(join(root, rel)), { recursive: true });
        await writeFile(join(root, rel), body);
        await utimes(join(root, rel), s, s);
      }
      const ctx = createHarness({ fs: createLocalFs({ root }), plugins: [searchTools()] });
      expect((await run(ctx, 'glob', { pattern: '*.ts', gitignore: false })).text).toBe('src/b.ts\ngen/c.ts\na.ts');
      expect((await run(ctx, 'glob', { pattern: '*.ts' })).text).toBe('src/b.ts\na.ts\n\n(1 more file matched but is excluded by .gitignore; set gitignore to false to include them.)');
      expect((await run(ctx, 'grep', { pattern: 'foo' })).text).toBe('Found 2 matches in 2 files\n\na.ts\nLine 1: foo\n\nsrc/b.ts\nLine 1: foo');
      expect(await run(ctx, 'glob', { pattern: '*', path: '..' })).toMatchObject({ isError: true, error: { code: 'FS_OUTSIDE_ROOT' } });
      expect(await run(ctx, 'grep', { pattern: 'x', path: '/etc' })).toMatchObject({ isError: true, error: { code: 'FS_OUTSIDE_ROOT' } });
      expect(await run(ctx, 'glob', { pattern: '../*' })).toMatchObject({ isError: true, error: { code: 'FS_OUTSIDE_ROOT' } });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('orders by path when the provider reports no modification times', () => {
    const text = renderGlob({
      dir: '/p',
      cwd: '/p',
      paths: [{ path: '/p/a' }, { path: '/p/b' }],
      total: 3,
      byMtime: false,
      ignored: 0,
      skippedCounts: { binary: 0, tooLarge: 0, unreadable: 0, loops: 1 },
    });
    expect(text).toBe('a\nb\n\n(Showing 2 of 3 paths, in path order. Narrow pattern (a subdirectory or an extension) or path to see the rest.)\n(1 symlinked directory skipped as a loop.)');
  });

  it('gives the same text whatever order the files were created in', async () => {
    const names = ['a.ts', 'b/c.ts', 'b/d.ts', 'e.md', 'f/g/h.ts', 'f/i.ts'];
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray(names, { minLength: names.length }), fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 6, maxLength: 6 }), async (order, times) => {
        const mtimes = Object.fromEntries(names.map((n, i) => [n, times[i]! * 1_000_000]));
        const a = setup(Object.fromEntries(order.map((n) => [n, n])), { mtimes });
        const b = setup(Object.fromEntries(names.map((n) => [n, n])), { mtimes });
        const ra = await run(a.ctx, 'glob', { pattern: '**/*.ts' });
        const rb = await run(b.ctx, 'glob', { pattern: '**/*.ts' });
        expect(ra.text).toBe(rb.text);
        const shown = ra.text.split('\n');
        const key = (p: string) => mtimes[p]!;
        for (let i = 1; i < shown.length; i++) expect(key(shown[i - 1]!)).toBeGreaterThanOrEqual(key(shown[i]!));
      }),
      { numRuns: 30 },
    );
  });
});

describe('grep tool', () => {
  it('renders matches grouped by file, by path then line', async () => {
    const { ctx } = setup({ 'src/b.ts': 'let x;\nfoo();\n', 'a.ts': 'foo\r\nbar\r\nfoo bar\r\n', 'c.md': 'nothing' });
    const r = await run(ctx, 'grep', { pattern: 'foo' });
    expect(r.text).toBe(['Found 3 matches in 2 files', '', 'a.ts', 'Line 1: foo', 'Line 3: foo bar', '', 'src/b.ts', 'Line 2: foo();'].join('\n'));
  });

  it('respects .gitignore (as glob does), skips hidden and binary files, and says so', async () => {
    const { ctx } = setup({ '.gitignore': 'gen/\n', 'gen/a.ts': 'foo', '.env': 'foo', 'bin': new Uint8Array([0x66, 0x6f, 0x6f, 0]), 'ok.ts': 'foo' });
    const r = await run(ctx, 'grep', { pattern: 'foo' });
    expect(r.text).toBe('Found 1 match in 1 file\n\nok.ts\nLine 1: foo\n\n(1 binary file skipped.)');
    expect((await run(ctx, 'glob', { pattern: '**/a.ts', gitignore: false })).text).toBe('gen/a.ts');
    expect((await run(ctx, 'grep', { pattern: 'bar' })).text).toBe('No matches found\n\n(1 binary file skipped.)');
  });

  it('include and path narrow the search', async () => {
    const { ctx } = setup({ 'a.ts': 'foo', 'a.js': 'foo', 'sub/b.ts': 'foo' });
    expect((await run(ctx, 'grep', { pattern: 'foo', include: '*.ts' })).text).toBe('Found 2 matches in 2 files\n\na.ts\nLine 1: foo\n\nsub/b.ts\nLine 1: foo');
    expect((await run(ctx, 'grep', { pattern: 'foo', path: 'sub' })).text).toBe('Found 1 match in 1 file\n\nsub/b.ts\nLine 1: foo');
    expect((await run(ctx, 'grep', { pattern: 'foo', path: 'a.js' })).text).toBe('Found 1 match in 1 file\n\na.js\nLine 1: foo');
  });

  it('shows 250 matches and says more exist', async () => {
    const { ctx } = setup({ 'a.txt': Array.from({ length: 300 }, (_, i) => `hit ${i}`).join('\n'), 'b.txt': 'hit' });
    const r = await run(ctx, 'grep', { pattern: 'hit' });
    const lines = r.text.split('\n');
    expect(lines[0]).toBe('Found 250 matches (more exist) in 1 file');
    expect(lines.filter((l) => l.startsWith('Line '))).toHaveLength(250);
    expect(lines.at(-1)).toBe('(Showing the first 250 matches in path order; more exist. Narrow pattern, path or include to see the rest.)');
    expect(r.text).not.toContain('b.txt');
  });

  it('cuts a matched line at 2000 bytes on a character boundary', async () => {
    const { ctx } = setup({ 'wide.txt': `x${'é'.repeat(3000)}`, 'emoji.txt': `x${'😀'.repeat(1000)}` });
    const r = await run(ctx, 'grep', { pattern: '^x' });
    const shown = r.text.split('\n').filter((l) => l.startsWith('Line 1: '));
    expect(shown).toHaveLength(2);
    for (const line of shown) {
      expect(line.endsWith(' (line truncated)')).toBe(true);
      const text = line.slice('Line 1: '.length, -' (line truncated)'.length);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2000);
      expect(Buffer.byteLength(text)).toBeGreaterThan(1995);
      expect(text.isWellFormed()).toBe(true);
      expect(Buffer.from(text).toString()).toBe(text);
    }
  });

  it('accepts (?i) and reports an invalid regex as FS_INVALID_ARGUMENT', async () => {
    const { ctx } = setup({ 'a.txt': 'Hello' });
    expect((await run(ctx, 'grep', { pattern: '(?i)hello' })).text).toContain('Line 1: Hello');
    expect(await run(ctx, 'grep', { pattern: '[' })).toMatchObject({ isError: true, error: { code: 'FS_INVALID_ARGUMENT' } });
    expect((await run(ctx, 'grep', { pattern: '[' })).text).toMatch(/^Error: invalid regular expression "\["/);
  });

  it('renders the file-budget footer', () => {
    const text = renderGrep({
      path: '/p',
      cwd: '/p',
      matches: [],
      truncated: 'files',
      filesSearched: 7,
      skippedCounts: { binary: 0, tooLarge: 2, unreadable: 1, loops: 0 },
      maxFileBytes: 1024 * 1024,
    });
    expect(text).toBe(
      'No matches found\n\n(The search stopped after 7 files. Narrow path or include to search the rest.)\n(2 files over 1 MiB skipped; 1 entry could not be read.)',
    );
  });
});
