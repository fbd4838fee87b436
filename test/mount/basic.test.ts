import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryFs, type MemoryFileSystem } from '../../src/backends/memory/index.js';
import { mountFs, type Mount } from '../../src/mount/index.js';
import { forceUnmount, fuseUnavailable, sh } from './helpers.js';

const why = await fuseUnavailable();
if (why !== undefined) console.warn(`mount tests skipped: ${why}`);

describe.skipIf(why !== undefined)('mountFs over a memory filesystem', () => {
  let dir: string;
  let fs: MemoryFileSystem;
  let mount: Mount;
  const text = async (path: string) => Buffer.from((await fs.readBytes(await fs.resolve(path), { maxBytes: 1 << 20 })).bytes).toString();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-'));
    fs = createMemoryFs({ files: { '/a.txt': 'hello\n', '/d/b.txt': 'bee\n' } });
    mount = await mountFs(fs, dir);
  });
  afterAll(async () => {
    await mount?.unmount().finally(() => forceUnmount(dir));
    await rm(dir, { recursive: true, force: true });
  });

  it('smoke', async () => {
    const r = await sh(`cd "${dir}" && ls -lai && cat a.txt && echo new > n.txt && cat n.txt && mkdir -p x/y && mv n.txt x/y/ && ls -R; stat -c "%i %n" a.txt; chmod 755 a.txt; echo "chmod $?"; ln -s a.txt l; echo "ln $?"; ln a.txt h; echo "link $?"; mkfifo ff; echo "mkfifo $?"`);
    console.log(r);
    expect(await text('/x/y/n.txt')).toBe('new\n');
  });
});
