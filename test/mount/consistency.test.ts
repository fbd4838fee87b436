import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs, type MemoryFileSystem } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { mountFs, type LoadOptions, type Mount } from '../../src/mount/index.js';
import { isFsError } from '../../src/seam/index.js';
import { cleanUp, fuseUnavailable, sh } from './helpers.js';

const why = await fuseUnavailable();
if (why !== undefined) console.warn(`mount tests skipped: ${why}`);

/**
 * A program holding a file open for writing, driven step by step over stdin: it opens, then
 * writes its first piece on "go", the rest and closes on the next "go", and prints what close said.
 */
const WRITER = `
const fs = require('fs');
const lines = require('readline').createInterface({ input: process.stdin })[Symbol.asyncIterator]();
(async () => {
  const fd = fs.openSync(process.argv[1], process.argv[2]);
  console.log('opened');
  await lines.next();
  fs.writeSync(fd, 'NEW-HALF');
  console.log('half');
  await lines.next();
  fs.writeSync(fd, '-REST');
  try { fs.closeSync(fd); console.log('closed ok'); } catch (e) { console.log('close failed ' + e.code); }
  process.exit(0);
})();
`;

/** `flags` as fs.openSync takes them: 'r+' keeps the bytes, 'w' truncates at open. */
function startWriter(path: string, flags = 'r+') {
  const child = spawn('node', ['-e', WRITER, path, flags], { cwd: '/', stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    next: async () => (await lines.next()).value as string | undefined,
    go: () => child.stdin.write('go\n'),
    kill: () => child.kill('SIGKILL'),
  };
}

describe.skipIf(why !== undefined)('publishing: old or new bytes, never torn, never a lost update', () => {
  let dir: string;
  let fs: MemoryFileSystem;
  let mount: Mount;
  const text = async (path: string) => Buffer.from((await fs.readBytes(await fs.resolve(path), { maxBytes: 1 << 20 })).bytes).toString();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-'));
    fs = createMemoryFs({ files: { '/torn.txt': 'old\n', '/race.txt': 'old\n', '/trunc.txt': 'old\n' } });
    mount = await mountFs(fs, dir);
  });
  afterAll(async () => {
    await cleanUp(mount, dir);
  });

  it('a reader of the contract sees the old bytes until the program closes, then all the new ones', async () => {
    const w = startWriter(join(dir, 'torn.txt'));
    expect(await w.next()).toBe('opened');
    w.go();
    expect(await w.next()).toBe('half');
    expect(await text('/torn.txt')).toBe('old\n');
    w.go();
    expect(await w.next()).toBe('closed ok');
    expect(await text('/torn.txt')).toBe('NEW-HALF-REST');
  });

  it('open(O_TRUNC) is no change of its own: a reader sees the old bytes until the program closes', async () => {
    const w = startWriter(join(dir, 'trunc.txt'), 'w');
    expect(await w.next()).toBe('opened');
    expect(await text('/trunc.txt')).toBe('old\n');
    w.go();
    expect(await w.next()).toBe('half');
    expect(await text('/trunc.txt')).toBe('old\n');
    w.go();
    expect(await w.next()).toBe('closed ok');
    expect(await text('/trunc.txt')).toBe('NEW-HALF-REST');
  });

  it('a change made through the contract after the program opened the file fails its close, and is kept', async () => {
    const w = startWriter(join(dir, 'race.txt'));
    expect(await w.next()).toBe('opened');
    await fs.writeBytes(await fs.resolve('/race.txt'), Buffer.from('theirs\n'));
    w.go();
    expect(await w.next()).toBe('half');
    w.go();
    expect(await w.next()).toBe('close failed EIO');
    expect(await text('/race.txt')).toBe('theirs\n');
  });
});

describe.skipIf(why !== undefined)('unmounting', () => {
  it('publishes what a program still holds open, then unmounts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-'));
    const fs = createMemoryFs({ files: { '/torn.txt': 'old\n' } });
    const mount = await mountFs(fs, dir);
    const w = startWriter(join(dir, 'torn.txt'));
    try {
      expect(await w.next()).toBe('opened');
      w.go();
      expect(await w.next()).toBe('half');
      await mount.unmount();
      expect(Buffer.from((await fs.readBytes(await fs.resolve('/torn.txt'), { maxBytes: 1024 })).bytes).toString()).toBe('NEW-HALF');
    } finally {
      w.kill();
      await cleanUp(mount, dir);
    }
  });
});

describe.skipIf(why !== undefined)('a read-only mount', () => {
  it('refuses every change with EROFS and still reads', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-'));
    const fs = createMemoryFs({ files: { '/a.txt': 'a\n' } });
    const mount = await mountFs(fs, dir, { readOnly: true });
    try {
      const r = await sh(`cd "${dir}" && cat a.txt; echo x > a.txt; echo x > b.txt; mkdir d; rm a.txt; true`);
      expect(r.stdout).toBe('a\n');
      expect(r.stderr.match(/Read-only file system/g)).toHaveLength(4);
      expect(Object.keys(fs.snapshot()).sort()).toEqual(['/a.txt']);
      expect(Buffer.from(fs.snapshot()['/a.txt'] as Uint8Array).toString()).toBe('a\n');
    } finally {
      await cleanUp(mount, dir);
    }
  });
});

describe.skipIf(why !== undefined)('an overlay on a local directory', () => {
  let root: string;
  let dir: string;
  let overlay: OverlayFileSystem;
  let mount: Mount;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-root-'));
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-'));
    await mkdir(join(root, 'src'));
    await writeFile(join(root, 'src', 'f.txt'), 'alpha\r\nbeta\r\n');
    overlay = await createOverlayFs({ lower: createLocalFs({ root }) });
    mount = await mountFs(overlay, dir);
  });
  afterAll(async () => {
    await cleanUp(mount, dir);
    await rm(root, { recursive: true, force: true });
  });

  it('programs change the sandbox only; commit applies it to the directory', async () => {
    const r = await sh(`cd "${dir}" && sed -i s/beta/gamma/ src/f.txt && echo new > src/n.txt && ls src`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('f.txt\nn.txt\n');
    expect(await readFile(join(root, 'src', 'f.txt'), 'latin1')).toBe('alpha\r\nbeta\r\n');
    const changes = await overlay.changes();
    expect(changes.map((c) => c.path).sort()).toEqual([join(root, 'src/f.txt'), join(root, 'src/n.txt')]);
    await overlay.commit();
    expect(await readFile(join(root, 'src', 'f.txt'), 'latin1')).toBe('alpha\r\ngamma\r\n');
    expect(await readFile(join(root, 'src', 'n.txt'), 'utf8')).toBe('new\n');
  });
});

describe.skipIf(why !== undefined)('mountpoints that cannot be used', () => {
  it('a missing directory is FS_NOT_FOUND, a file FS_NOT_DIRECTORY, a base that is no directory FS_NOT_DIRECTORY', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-'));
    try {
      const fs = createMemoryFs({ files: { '/f.txt': 'x' } });
      await writeFile(join(dir, 'file'), 'x');
      await expect(mountFs(fs, join(dir, 'missing'))).rejects.toMatchObject({ name: 'FsError', code: 'FS_NOT_FOUND' });
      await expect(mountFs(fs, join(dir, 'file'))).rejects.toMatchObject({ name: 'FsError', code: 'FS_NOT_DIRECTORY' });
      await expect(mountFs(fs, dir, { base: '/f.txt' })).rejects.toMatchObject({ name: 'FsError', code: 'FS_NOT_DIRECTORY' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a missing piece of FUSE', () => {
  const fs = createMemoryFs();
  const refusal = async (load: LoadOptions) => {
    const err = await mountFs(fs, '/nonexistent-mountpoint', { load }).then(() => undefined, (e: unknown) => e);
    expect(isFsError(err, 'FS_UNSUPPORTED'), String(err)).toBe(true);
    expect((err as Error).message).not.toMatch(/\n\s+at /);
    return (err as Error).message;
  };
  // A loader that works, so only the device and fusermount are missing.
  const ok = async () => class {} as never;

  it('libfuse.so.2', async () => {
    const loader = () => Promise.reject(new Error('libfuse.so.2: cannot open shared object file: No such file or directory'));
    expect(await refusal({ loader, device: '/proc/self/exe', path: process.env.PATH! })).toMatch(/^cannot mount: missing libfuse\.so\.2: install it with "apt-get install -y libfuse2 fuse"/);
  });
  it('the fuse-native package', async () => {
    const loader = () => Promise.reject(Object.assign(new Error("Cannot find package 'fuse-native'"), { code: 'ERR_MODULE_NOT_FOUND' }));
    expect(await refusal({ loader, device: '/proc/self/exe', path: process.env.PATH! })).toMatch(/the fuse-native package: install it with: npm install fuse-native@"\^2\.2\.6"/);
  });
  it('the device and fusermount, all named at once', async () => {
    const message = await refusal({ loader: ok, device: '/nonexistent/fuse', path: '/nonexistent' });
    expect(message).toMatch(/the FUSE device \/nonexistent\/fuse/);
    expect(message).toMatch(/fusermount: install it with "apt-get install -y libfuse2 fuse"/);
  });
});
