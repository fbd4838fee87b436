import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createFs, createHarness } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, renderRead, searchTools } from '../../src/tools/index.js';

function setup(files: Record<string, string>) {
  const fs = createMemoryFs({ cwd: '/w', files });
  const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools(), searchTools()] });
  return { fs, run: (name: string, args: unknown) => ctx.tools.execute(name, args, { owner: 'o' }) };
}

const codeOf = (r: { isError: boolean; error?: { code: string } }) => (r.isError ? r.error?.code : 'ok');

describe('arguments upstream refuses', () => {
  it('a blank file_path is refused by every file tool, and nothing is written', async () => {
    const { fs, run } = setup({ '/w/a.txt': 'x\n' });
    for (const [name, args] of [
      ['write', { file_path: '   ', content: 'x' }],
      ['write', { file_path: '\t\n', content: 'x' }],
      ['read', { file_path: '  ' }],
      ['edit', { file_path: ' ', old_string: 'a', new_string: 'b' }],
    ] as const) {
      const r = await run(name, args);
      expect(codeOf(r), `${name} ${JSON.stringify(args)}`).toBe('FS_INVALID_ARGUMENT');
      expect(r.text).toBe(`Error: invalid arguments for ${name}: argument "file_path": must not be blank`);
    }
    expect((await fs.listDir(await fs.resolve('/w'))).map((e) => e.name)).toEqual(['a.txt']);
  });

  it('a blank glob pattern, grep include or search path is refused instead of finding nothing', async () => {
    const { run } = setup({ '/w/a.txt': 'x\n' });
    const cases = [
      ['glob', { pattern: '  ' }, 'pattern'],
      ['glob', { pattern: '*', path: ' ' }, 'path'],
      ['grep', { pattern: 'x', include: ' ' }, 'include'],
      ['grep', { pattern: 'x', path: '  ' }, 'path'],
    ] as const;
    for (const [name, args, arg] of cases) {
      const r = await run(name, args);
      expect(codeOf(r), `${name} ${JSON.stringify(args)}`).toBe('FS_INVALID_ARGUMENT');
      expect(r.text).toBe(`Error: invalid arguments for ${name}: argument "${arg}": must not be blank`);
    }
    // A regex of spaces is a real search.
    expect(codeOf(await run('grep', { pattern: ' ' }))).toBe('ok');
  });
});

describe('glob skips version-control directories, also when named as the path', () => {
  it('refuses a path inside .git (or another VCS directory) and lists nothing from it', async () => {
    const { run } = setup({ '/w/.git/config': '[core]\n', '/w/.git/objects/ab': 'x', '/w/sub/.hg/store': 'x', '/w/a.txt': 'x\n' });
    for (const path of ['.git', '.git/objects', '/w/.git', 'sub/.hg']) {
      const r = await run('glob', { pattern: '*', path });
      expect(codeOf(r), path).toBe('FS_INVALID_ARGUMENT');
      expect(r.text).toMatch(/is inside a version-control directory \((\.git|\.hg)\), which glob skips/);
    }
    const all = await run('glob', { pattern: '**/*' });
    expect(all.text).toBe('a.txt');
  });
});

describe('resolve and a late abort', () => {
  it('an abort that fires while the provider resolves fails the call with FS_ABORTED', async () => {
    const memory = createMemoryFs({ files: { '/w/a.txt': 'x\n' }, cwd: '/w' });
    const controller = new AbortController();
    // A provider that finishes without looking at the signal, which fired meanwhile.
    const fs = createFs({
      ...memory.provider,
      resolve: async (path, opts) => {
        const target = await memory.provider.resolve(path, opts);
        controller.abort();
        return target;
      },
    });
    await expect(fs.resolve('a.txt', { signal: controller.signal })).rejects.toMatchObject({ name: 'FsError', code: 'FS_ABORTED' });
  });
});

describe('the read footer', () => {
  it('says "1 line" for one line and "N lines" otherwise, as docs/tools.md shows', () => {
    const value = (n: number) => ({
      path: '/p',
      version: 'v' as never,
      bom: false,
      offset: 1,
      lines: Array.from({ length: n }, (_, i) => ({ number: i + 1, text: 'x' })),
      totalLines: n,
    });
    expect(renderRead(value(1))).toContain('\n(End of file - total 1 line)\n');
    expect(renderRead(value(2))).toContain('\n(End of file - total 2 lines)\n');
    const docs = readFileSync(new URL('../../docs/tools.md', import.meta.url), 'utf8');
    expect(docs).toContain('(End of file - total 1 line)');
    expect(docs).toContain('(End of file - total 300 lines)');
  });
});
