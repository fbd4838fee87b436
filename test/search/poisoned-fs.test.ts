/**
 * glob and grep over the memory provider with the real disk poisoned: every function of `node:fs`
 * and `node:fs/promises` throws and is recorded, and so does every method of fast-glob's default
 * fs adapter (which it would merge under a partial adapter). The poison is armed after the
 * modules are loaded (the test runner itself loads modules through `node:fs`); `vi.mock` also
 * hands any module importing `node:fs` through the runner a poisoned copy.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const poison = vi.hoisted(() => {
  const calls: string[] = [];
  const restore: (() => void)[] = [];
  const poisonObject = (obj: Record<string, unknown>, prefix: string) => {
    for (const key of Object.keys(obj)) {
      const original = obj[key];
      // Classes (Stats, Dirent, ReadStream, …) stay: constructing one touches no disk.
      if (typeof original !== 'function' || /^[A-Z]/.test(key)) continue;
      obj[key] = function poisoned(...args: unknown[]) {
        calls.push(`${prefix}${key}`);
        const error = Object.assign(new Error(`real disk access through ${prefix}${key}`), { code: 'EPOISONED' });
        // Fail the way the caller listens: callback, promise, or throw.
        const last = args.at(-1);
        if (typeof last === 'function') {
          queueMicrotask(() => (last as (e: Error) => void)(error));
          return undefined;
        }
        if (prefix.includes('promises')) return Promise.reject(error);
        throw error;
      };
      restore.push(() => {
        obj[key] = original;
      });
    }
  };
  /** A module namespace for vi.mock with every function poisoned. */
  const poisonedModule = async (importOriginal: () => Promise<unknown>, prefix: string) => {
    const mod = { ...((await importOriginal()) as Record<string, unknown>) };
    poisonObject(mod, prefix);
    return { ...mod, default: mod };
  };
  return {
    calls,
    poisonObject,
    poisonedModule,
    restore: () => {
      for (const undo of restore.splice(0)) undo();
    },
  };
});

vi.mock('node:fs', (importOriginal) => poison.poisonedModule(importOriginal, 'import fs.'));
vi.mock('fs', (importOriginal) => poison.poisonedModule(importOriginal, 'import fs.'));
vi.mock('node:fs/promises', (importOriginal) => poison.poisonedModule(importOriginal, 'import fs.promises.'));
vi.mock('fs/promises', (importOriginal) => poison.poisonedModule(importOriginal, 'import fs.promises.'));

import fc from 'fast-check';
import fg from 'fast-glob';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { comparePaths, glob, grep, matchGlob } from '../../src/index.js';
import { createHarness } from '../../src/harness/index.js';
import { searchTools } from '../../src/tools/search.js';

beforeAll(() => {
  const require = createRequire(import.meta.url);
  // Resolved before the poison: require() itself reads the disk.
  const settings = require('fast-glob/out/settings.js') as { DEFAULT_FILE_SYSTEM_ADAPTER: Record<string, unknown> };
  const fs = process.getBuiltinModule('node:fs') as unknown as Record<string, unknown> & { promises: Record<string, unknown> };
  poison.poisonObject(fs, 'fs.');
  poison.poisonObject(fs.promises, 'fs.promises.');
  // Named imports of the builtin (`import { readFile } from 'node:fs'`) see the poison too.
  syncBuiltinESMExports();
  poison.poisonObject(settings.DEFAULT_FILE_SYSTEM_ADAPTER, 'fast-glob default adapter.');
  poison.calls.length = 0;
});

afterAll(() => {
  poison.restore();
  syncBuiltinESMExports();
});


describe('search over memory with node:fs poisoned', () => {
  it('the poison works: fast-glob on its own default adapter fails', async () => {
    poison.calls.length = 0;
    await expect(fg.glob('**', { cwd: '/p' })).rejects.toThrow(/real disk access through fast-glob default adapter/);
    expect(() => fg.sync('**', { cwd: '/p' })).toThrow(/real disk access/);
    const fsModule = await import('node:fs');
    expect(() => fsModule.readFileSync('/etc/hostname')).toThrow(/real disk access/);
    const promises = await import('node:fs/promises');
    await expect(promises.readFile('/etc/hostname')).rejects.toThrow(/real disk access/);
    expect(poison.calls).toEqual(
      expect.arrayContaining(['fast-glob default adapter.readdir', 'fast-glob default adapter.readdirSync']),
    );
    poison.calls.length = 0;
  });

  it('glob and grep answer from memory without one real-disk call', async () => {
    poison.calls.length = 0;
    const fs = createMemoryFs({
      cwd: '/p',
      files: { 'a.ts': 'foo\n', 'src/b.ts': 'bar\nfoo', '.gitignore': 'gen/\n', 'gen/c.ts': 'foo', 'README.md': 'foo' },
    });
    expect((await glob(fs, '**/*.ts')).matches.map((m) => m.path)).toEqual(['/p/a.ts', '/p/src/b.ts']);
    expect((await glob(fs, '**/*.ts', { gitignore: false })).matches.map((m) => m.path)).toEqual(['/p/a.ts', '/p/gen/c.ts', '/p/src/b.ts']);
    expect((await glob(fs, 'README.md')).matches.map((m) => m.path)).toEqual(['/p/README.md']);
    expect((await grep(fs, 'foo')).matches.map((m) => `${m.path}:${m.line}`)).toEqual(['/p/README.md:1', '/p/a.ts:1', '/p/src/b.ts:2']);

    const ctx = createHarness({ fs, plugins: [searchTools()] });
    const g = await ctx.tools.execute('glob', { pattern: '*.ts' }, { owner: 'agent' });
    expect(g.isError).toBe(false);
    expect(g.text.split('\n\n')[0]!.split('\n').sort()).toEqual(['a.ts', 'src/b.ts']);
    const r = await ctx.tools.execute('grep', { pattern: 'foo', include: '*.ts' }, { owner: 'agent' });
    expect(r.text).toContain('Found 2 matches in 2 files');
    expect(poison.calls).toEqual([]);
  });

  it('glob equals the filtered tree, over random trees, without touching the disk', async () => {
    poison.calls.length = 0;
    const seg = fc.constantFrom('a', 'b', 'c.ts', '.d', 'e');
    const treeArb = fc
      .uniqueArray(fc.array(seg, { minLength: 1, maxLength: 3 }).map((s) => s.join('/')), { maxLength: 10 })
      .map((ps) => ps.filter((p) => !ps.some((q) => q.startsWith(`${p}/`))));
    const patternArb = fc.constantFrom('**', '*', '**/*.ts', 'a/**/c.ts', '{a,b}/*', '*/e', '[ab]/*');
    await fc.assert(
      fc.asyncProperty(treeArb, patternArb, async (tree, pattern) => {
        if (pattern.endsWith('/**')) fc.pre(!tree.some((p) => matchGlob(pattern.slice(0, -3), p)));
        const fs = createMemoryFs({ cwd: '/p', files: Object.fromEntries(tree.map((p) => [p, 'x'])) });
        const expected = tree.filter((p) => matchGlob(pattern, p)).map((p) => `/p/${p}`).sort(comparePaths);
        expect((await glob(fs, pattern)).matches.map((m) => m.path)).toEqual(expected);
        const hits = (await grep(fs, 'x', { hidden: true, gitignore: false })).matches.map((m) => m.path);
        expect(hits).toEqual(tree.map((p) => `/p/${p}`).sort(comparePaths));
      }),
      { numRuns: 60 },
    );
    expect(poison.calls).toEqual([]);
  });
});
