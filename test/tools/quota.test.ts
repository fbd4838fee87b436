import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHarness, type FileSystem, type FsQuota } from '../../src/index.js';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, patchTools } from '../../src/tools/index.js';

// Q1 through the model's tools: a refused write or patch is the tool's FS_QUOTA_EXCEEDED error,
// naming the limit, and a patch over many files lands whole or not at all.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A root holding a.txt (40 bytes) and b.txt (10 bytes), under `quota`. */
const makers: [string, (quota: FsQuota) => Promise<FileSystem>][] = [
  ['memory', async (quota) => createMemoryFs({ ...quota, files: { '/w/a.txt': `${'a'.repeat(39)}\n`, '/w/b.txt': `${'b'.repeat(9)}\n` } })],
  ['local', async (quota) => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-fs-quota-tools-'));
    dirs.push(root);
    writeFileSync(join(root, 'a.txt'), `${'a'.repeat(39)}\n`);
    writeFileSync(join(root, 'b.txt'), `${'b'.repeat(9)}\n`);
    return createLocalFs({ root, ...quota });
  }],
  ['overlay', async (quota) => createOverlayFs({ lower: createMemoryFs({ files: { '/w/a.txt': `${'a'.repeat(39)}\n`, '/w/b.txt': `${'b'.repeat(9)}\n` } }), ...quota })],
];

describe.each(makers)('quota through the tools over %s', (_name, make) => {
  it('Q1: write past the limit is FS_QUOTA_EXCEEDED naming the limit; nothing is written', async () => {
    const fs = await make({ maxBytes: 100 });
    const cwd = fs.root ?? '/w';
    const ctx = createHarness({ fs, cwd, plugins: [createObservationPolicy(), fsTools()] });
    const r = await ctx.tools.execute('write', { file_path: 'c.txt', content: 'c'.repeat(200) }, { owner: 'o' });
    expect(r.isError).toBe(true);
    expect(r.isError && r.error.code).toBe('FS_QUOTA_EXCEEDED');
    expect(r.isError && r.text).toContain('quota of 100 bytes');
    expect(await fs.stat(await fs.resolve(`${cwd}/c.txt`))).toBeUndefined();
  });

  it('Q1: a patch over two files that would pass the limit changes neither', async () => {
    const fs = await make({ maxBytes: 100 });
    const cwd = fs.root ?? '/w';
    const ctx = createHarness({ fs, cwd, plugins: [createObservationPolicy(), fsTools(), patchTools()] });
    for (const f of ['a.txt', 'b.txt']) await ctx.tools.execute('read', { file_path: f }, { owner: 'o' });
    const grow = (name: string, old: string) => [`*** Update File: ${name}`, '@@', `-${old}`, `+${'z'.repeat(40)}`];
    const input = ['*** Begin Patch', ...grow('b.txt', 'b'.repeat(9)), ...grow('a.txt', 'a'.repeat(39)), '*** Add File: n.txt', `+${'n'.repeat(30)}`, '*** End Patch', ''].join('\n');
    const r = await ctx.tools.execute('apply_patch', { input }, { owner: 'o' });
    expect(r.isError && r.error.code).toBe('FS_QUOTA_EXCEEDED');
    const text = async (p: string) => (await fs.readText(await fs.resolve(`${cwd}/${p}`))).text;
    expect(await text('a.txt')).toBe(`${'a'.repeat(39)}\n`);
    expect(await text('b.txt')).toBe(`${'b'.repeat(9)}\n`);
    expect(await fs.stat(await fs.resolve(`${cwd}/n.txt`))).toBeUndefined();
  });
});
