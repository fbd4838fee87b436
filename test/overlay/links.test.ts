import { lstat, mkdtemp, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'dsh-overlay-links-'));
  dirs.push(d);
  return d;
}

/** A local lower with a file and a link to it, and a persisted overlay over it. */
async function setup() {
  const root = await tempDir();
  const stateDir = await tempDir();
  await writeFile(join(root, 'text'), 'hello\n');
  await symlink('text', join(root, 'low'));
  const open = async () => createOverlayFs({ lower: createLocalFs({ root }), cwd: root, stateDir });
  return { root, open };
}

const own = (fs: OverlayFileSystem, path: string) => fs.resolve(path, { noFollow: true });

describe('links in the overlay', () => {
  it('a link made in the overlay is read through, listed, kept across reopening, shown, and committed as a real link', async () => {
    const { root, open } = await setup();
    const fs = await open();
    await fs.symlink!(await own(fs, 'link'), 'text');
    expect(await fs.readlink!(await own(fs, 'link'))).toBe('text');
    expect(await fs.readlink!(await own(fs, 'low'))).toBe('text');
    expect((await fs.readText(await fs.resolve('link'))).text).toBe('hello\n');
    expect((await fs.listDir(await fs.resolve('.'))).map((e) => `${e.name}:${e.type}`)).toEqual(['link:file', 'low:file', 'text:file']);
    await expect(lstat(join(root, 'link'))).rejects.toThrow();
    expect(await fs.changes()).toMatchObject([{ path: join(root, 'link'), kind: 'added', type: 'link', linkText: 'text' }]);
    expect(await fs.diff()).toBe('diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1,1 @@\n+text\n\\ No newline at end of file\n');

    const again = await open();
    expect(await again.readlink!(await own(again, 'link'))).toBe('text');
    expect((await again.commit()).committed).toEqual([join(root, 'link')]);
    expect(await readlink(join(root, 'link'))).toBe('text');
    expect(await again.changes()).toEqual([]);
  });

  it('removing and moving links are recorded, what they lead to stays, and commit applies them', async () => {
    const { root, open } = await setup();
    const fs = await open();
    await fs.renameLink!(await own(fs, 'low'), await own(fs, 'moved'));
    await fs.symlink!(await own(fs, 'temp'), 'nowhere');
    await fs.removeLink!(await own(fs, 'temp'));
    expect((await fs.readText(await fs.resolve('text'))).text).toBe('hello\n');
    expect(await fs.readlink!(await own(fs, 'moved'))).toBe('text');
    await expect(fs.readlink!(await own(fs, 'low'))).rejects.toMatchObject({ code: 'FS_NOT_FOUND' });
    const changes = await fs.changes();
    expect(changes.map((c) => `${c.kind} ${c.type} ${c.path.slice(root.length + 1)}`)).toEqual(['deleted link low', 'added link moved']);
    expect(await fs.diff()).toContain('deleted file mode 120000');
    const result = await fs.commit();
    expect(result.conflicts).toEqual([]);
    expect((await readdir(root)).sort()).toEqual(['moved', 'text']);
    expect(await readlink(join(root, 'moved'))).toBe('text');
  });

  it('a lower link changed since the overlay removed it is a conflict, and the lower is left as it is', async () => {
    const { root, open } = await setup();
    const fs = await open();
    await fs.removeLink!(await own(fs, 'low'));
    await rm(join(root, 'low'));
    await symlink('elsewhere', join(root, 'low'));
    const result = await fs.commit();
    expect(result.conflicts.map((c) => c.path)).toEqual([join(root, 'low')]);
    expect(await readlink(join(root, 'low'))).toBe('elsewhere');
    expect((await fs.commit(undefined, { force: true })).overwritten).toEqual([join(root, 'low')]);
    await expect(lstat(join(root, 'low'))).rejects.toThrow();
  });

  it('discard drops a link; a fork inherits the parent\'s links and its own stay its own', async () => {
    const lower = createMemoryFs({ files: { '/f.txt': 'x\n' } });
    const fs = await createOverlayFs({ lower });
    await fs.symlink!(await own(fs, '/l'), 'f.txt');
    const fork = await fs.fork();
    expect(await fork.readlink!(await own(fork, '/l'))).toBe('f.txt');
    await fork.symlink!(await own(fork, '/m'), 'l');
    expect((await fork.readText(await fork.resolve('/m'))).text).toBe('x\n');
    expect((await fork.changes(undefined, { against: 'parent' })).map((c) => `${c.kind} ${c.type} ${c.path}`)).toEqual(['added link /m']);
    await expect(fs.readlink!(await own(fs, '/m'))).rejects.toMatchObject({ code: 'FS_NOT_FOUND' });
    await fs.discard();
    await expect(fs.readlink!(await own(fs, '/l'))).rejects.toMatchObject({ code: 'FS_NOT_FOUND' });
    expect(await fs.changes()).toEqual([]);
    expect(await fork.readlink!(await own(fork, '/l'))).toBe('f.txt');
  });
});

describe('links in the overlay that lead to their own directory', () => {
  it('a link to `.` is listed as a directory, and the directory can still be listed and stat\'ed', async () => {
    const fs = await createOverlayFs({ lower: createMemoryFs({ files: { '/d/f.txt': 'x\n' } }) });
    await fs.symlink!(await own(fs, '/d/here'), '.');
    expect((await fs.listDir(await fs.resolve('/d'))).map((e) => `${e.name}:${e.type}`)).toEqual(['f.txt:file', 'here:directory']);
    expect((await fs.stat(await fs.resolve('/d/here')))?.type).toBe('directory');
    expect((await fs.readText(await fs.resolve('/d/here/here/f.txt'))).text).toBe('x\n');
  });
});
