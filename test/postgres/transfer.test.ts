import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresFs, exportTree, importTree } from '../../src/backends/postgres/index.js';
import { codeOf } from '../support/code-of.js';
import { newWorkspace, sharedPglite } from './helpers.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'dsh-pg-transfer-'));
  dirs.push(d);
  return d;
}

/** Everything under a host directory: files with their bytes, directories, links with their text. */
async function hostTree(dir: string, rel = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(join(dir, rel))).sort()) {
    const path = rel === '' ? name : `${rel}/${name}`;
    const info = await lstat(join(dir, path));
    if (info.isSymbolicLink()) out[path] = `link ${await readlink(join(dir, path))}`;
    else if (info.isDirectory()) {
      out[path] = 'dir';
      Object.assign(out, await hostTree(dir, path));
    } else out[path] = `file ${(await readFile(join(dir, path))).toString('base64')}`;
  }
  return out;
}

async function sample(dir: string) {
  await mkdir(join(dir, 'src/deep'), { recursive: true });
  await mkdir(join(dir, 'empty'));
  await writeFile(join(dir, 'src/a.ts'), 'export const a = 1;\n');
  await writeFile(join(dir, 'src/deep/bin'), Buffer.from([0, 1, 2, 255]));
  await writeFile(join(dir, 'README.md'), '# hi\n');
  await symlink('src/a.ts', join(dir, 'rel-link'));
  await symlink(join(dir, 'src'), join(dir, 'abs-link'));
  await symlink('/etc/passwd', join(dir, 'outside'));
  await symlink('../../..', join(dir, 'src/up'));
  await utimes(join(dir, 'README.md'), new Date(1_000_000_000_000), new Date(1_000_000_000_000));
}

describe('import and export of a directory tree (PGlite)', () => {
  it('imports files, directories and links (skipping links that leave the tree), and exports the same tree back', async () => {
    const client = await sharedPglite();
    const workspace = newWorkspace('import');
    const src = await tempDir();
    await sample(src);
    const report = await importTree({ client, workspace, dir: src });
    expect(report).toEqual({
      files: 3,
      directories: 3,
      symlinks: 2,
      bytes: 20 + 4 + 5,
      skipped: [
        { path: '/outside', reason: expect.stringContaining('outside the directory imported') },
        { path: '/src/up', reason: expect.stringContaining('outside the directory imported') },
      ],
    });
    const fs = createPostgresFs({ client, workspace });
    expect((await fs.readText(await fs.resolve('/rel-link'))).text).toBe('export const a = 1;\n');
    expect((await fs.readText(await fs.resolve('/abs-link/a.ts'))).text).toBe('export const a = 1;\n');
    expect((await fs.stat(await fs.resolve('/README.md')))?.mtimeMs).toBe(1_000_000_000_000);

    const out = join(await tempDir(), 'copy');
    const back = await exportTree({ client, workspace, dir: out });
    expect(back).toMatchObject({ files: 3, directories: 3, symlinks: 2, bytes: 29 });
    const want = await hostTree(src);
    delete want.outside;
    delete want['src/up'];
    want['abs-link'] = 'link src'; // an absolute link comes back relative
    expect(await hostTree(out)).toEqual(want);
    expect((await lstat(join(out, 'README.md'))).mtimeMs).toBe(1_000_000_000_000);
  });

  it('refuses a non-empty target unless told to overwrite; overwriting replaces same paths and removes nothing', async () => {
    const client = await sharedPglite();
    const workspace = newWorkspace('overwrite');
    const fs = createPostgresFs({ client, workspace });
    await fs.writeText(await fs.resolve('/keep.txt'), 'kept\n');
    await fs.writeText(await fs.resolve('/src/a.ts'), 'old\n');
    const src = await tempDir();
    await sample(src);
    expect(await codeOf(importTree({ client, workspace, dir: src }))).toBe('FS_ALREADY_EXISTS');
    expect((await fs.readText(await fs.resolve('/src/a.ts'))).text).toBe('old\n');
    await importTree({ client, workspace, dir: src, overwrite: true });
    expect((await fs.readText(await fs.resolve('/src/a.ts'))).text).toBe('export const a = 1;\n');
    expect((await fs.readText(await fs.resolve('/keep.txt'))).text).toBe('kept\n');

    const out = await tempDir();
    await writeFile(join(out, 'mine.txt'), 'mine');
    // A link in the target where a file goes is replaced, not followed.
    const victim = join(await tempDir(), 'victim');
    await writeFile(victim, 'untouched');
    await symlink(victim, join(out, 'keep.txt'));
    expect(await codeOf(exportTree({ client, workspace, dir: out }))).toBe('FS_ALREADY_EXISTS');
    await exportTree({ client, workspace, dir: out, overwrite: true });
    expect(await readFile(join(out, 'keep.txt'), 'utf8')).toBe('kept\n');
    expect(await readFile(victim, 'utf8')).toBe('untouched');
    expect(await readFile(join(out, 'mine.txt'), 'utf8')).toBe('mine');
  });

  it('an import that fails leaves the workspace as it was (one transaction); a directory is not replaced by a file', async () => {
    const client = await sharedPglite();
    const workspace = newWorkspace('atomic');
    const fs = createPostgresFs({ client, workspace });
    await fs.writeText(await fs.resolve('/x/inner.txt'), 'inner\n');
    const src = await tempDir();
    await writeFile(join(src, 'a.txt'), 'a');
    await writeFile(join(src, 'x'), 'a file where the workspace has a directory');
    expect(await codeOf(importTree({ client, workspace, dir: src, overwrite: true }))).toBe('FS_CONFLICT');
    expect(await codeOf(fs.readText(await fs.resolve('/a.txt')))).toBe('FS_NOT_FOUND');
    const big = await tempDir();
    await writeFile(join(big, 'big'), Buffer.alloc(2048));
    expect(await codeOf(importTree({ client, workspace: newWorkspace('big'), dir: big, maxFileBytes: 1024 }))).toBe('FS_TOO_LARGE');
    expect(await codeOf(exportTree({ client, workspace: newWorkspace('none'), dir: join(big, 'out') }))).toBe('FS_NOT_FOUND');
  });
});

describe('the executable bit through import and export', () => {
  it('an executable host file is executable in the workspace and again when exported; others are not', async () => {
    const client = await sharedPglite();
    const workspace = newWorkspace('modes');
    const src = await tempDir();
    await writeFile(join(src, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await writeFile(join(src, 'data.txt'), 'data\n', { mode: 0o644 });
    await importTree({ client, workspace, dir: src });
    const fs = createPostgresFs({ client, workspace });
    expect((await fs.stat(await fs.resolve('/run.sh')))?.executable).toBe(true);
    expect((await fs.stat(await fs.resolve('/data.txt')))?.executable).toBe(false);
    const out = join(await tempDir(), 'out');
    await exportTree({ client, workspace, dir: out });
    expect((await lstat(join(out, 'run.sh'))).mode & 0o100).toBe(0o100);
    expect((await lstat(join(out, 'data.txt'))).mode & 0o111).toBe(0);
  });
});
