import { execFileSync, spawn } from 'node:child_process';
import { existsSync, promises as fsp, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  TEMP_NAME_PATTERN,
  createLocalFs,
  createLocalProvider,
  type LocalFileSystem,
} from '../../src/backends/local/index.js';
import { isTempName } from '../../src/backends/local/provider.js';
import { tempName } from '../../src/backends/local/provider.js';
import { FsTargetKey, contentVersion, createFs, type FsTarget } from '../../src/seam/index.js';
import { ageAtimes, buildForChildren, findTemps, makeArea, treeDigest, writeOutOfBand, type Area } from './helpers.js';

const utf8 = (s: string) => new Uint8Array(Buffer.from(s));

let area: Area;
let fs: LocalFileSystem;

beforeEach(async () => {
  area = await makeArea('provider');
  fs = createLocalFs({ root: area.root });
});
afterEach(async () => {
  expect(await findTemps(area.area)).toEqual([]);
  await area.cleanup();
});

const at = (rel: string) => join(area.root, rel);
const resolve = (rel: string) => fs.resolve(rel);

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect((err as { name?: string }).name).toBe('FsError');
    return (err as { code: string }).code;
  }
  return 'ok';
}

/** Rejects a pending operation that hangs, after unblocking a FIFO it may be stuck on. */
async function noHang<T>(p: Promise<T>, fifo?: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(async () => {
      // A blocking open of the read end returns once a writer appears: release it, then fail.
      if (fifo) await fsp.open(fifo, 'r+').then((h) => h.close()).catch(() => undefined);
      reject(new Error('the operation blocked'));
    }, 3000);
  });
  try {
    return await Promise.race([p, hang]);
  } finally {
    clearTimeout(timer);
  }
}

describe('construction', () => {
  test('the root is canonicalised once (realpath), and cwd is taken inside it', async () => {
    await fsp.mkdir(at('sub'));
    await fsp.symlink(area.root, join(area.area, 'alias'));
    const viaAlias = createLocalFs({ root: join(area.area, 'alias'), cwd: join(area.area, 'alias', 'sub') });
    expect(viaAlias.root).toBe(area.root);
    expect(viaAlias.cwd).toBe(at('sub'));
    expect(createLocalFs({ root: area.root, cwd: 'sub' }).cwd).toBe(at('sub'));
    const t = await viaAlias.resolve('f.txt');
    expect(t.targetKey).toBe(at('sub/f.txt'));
  });

  test('a missing root, a file as root, a cwd outside and a bad anchoring mode are refused', async () => {
    await fsp.writeFile(at('file'), 'x');
    expect(() => createLocalFs({ root: join(area.area, 'missing') })).toThrow(expect.objectContaining({ code: 'FS_NOT_FOUND' }));
    expect(() => createLocalFs({ root: at('file') })).toThrow(expect.objectContaining({ code: 'FS_NOT_DIRECTORY' }));
    expect(() => createLocalFs({ root: area.root, cwd: area.outside })).toThrow(expect.objectContaining({ code: 'FS_OUTSIDE_ROOT' }));
    expect(() => createLocalFs({ root: area.root, cwd: '../outside' })).toThrow(expect.objectContaining({ code: 'FS_OUTSIDE_ROOT' }));
    expect(() => createLocalFs({ root: '' })).toThrow(expect.objectContaining({ code: 'FS_INVALID_ARGUMENT' }));
    expect(() => createLocalFs({ root: area.root, anchoring: 'nope' as never })).toThrow(
      expect.objectContaining({ code: 'FS_INVALID_ARGUMENT' }),
    );
  });
});

describe('atomic, durable writes', () => {
  test('the mode of an existing file is kept; a new file gets 0o666 & ~umask', async () => {
    await fsp.writeFile(at('tool.sh'), '#!/bin/sh\n');
    await fsp.chmod(at('tool.sh'), 0o751);
    await fs.writeText(await resolve('tool.sh'), '#!/bin/sh\necho hi\n');
    expect((await fsp.stat(at('tool.sh'))).mode & 0o7777).toBe(0o751);
    await fs.editText(await resolve('tool.sh'), { oldString: 'hi', newString: 'there' });
    expect((await fsp.stat(at('tool.sh'))).mode & 0o7777).toBe(0o751);

    await fs.writeText(await resolve('new.txt'), 'new');
    const umask = process.umask();
    expect((await fsp.stat(at('new.txt'))).mode & 0o777).toBe(0o666 & ~umask);
  });

  test('the owner of an existing file is kept (when running as root)', async ({ skip }) => {
    if (process.getuid?.() !== 0) skip();
    await fsp.writeFile(at('owned.txt'), 'a');
    await fsp.chown(at('owned.txt'), 65534, 65534);
    await fs.writeText(await resolve('owned.txt'), 'b');
    const st = await fsp.stat(at('owned.txt'));
    expect([st.uid, st.gid]).toEqual([65534, 65534]);
  });

  test('a write replaces the inode (rename), and a reader holding the old file keeps the old bytes', async () => {
    await fsp.writeFile(at('f.txt'), 'old');
    const held = await fsp.open(at('f.txt'), 'r');
    const inode = (await held.stat()).ino;
    await fs.writeText(await resolve('f.txt'), 'new');
    expect((await fsp.stat(at('f.txt'))).ino).not.toBe(inode);
    expect((await held.readFile()).toString()).toBe('old');
    await held.close();
  });

  test('hard links: a write breaks the link; the other name keeps the old content', async () => {
    await fsp.writeFile(join(area.outside, 'shared.txt'), 'shared\n');
    await fsp.link(join(area.outside, 'shared.txt'), at('linked.txt'));
    await fs.writeText(await resolve('linked.txt'), 'replaced\n');
    expect(await fsp.readFile(join(area.outside, 'shared.txt'), 'utf8')).toBe('shared\n');
    expect(await fsp.readFile(at('linked.txt'), 'utf8')).toBe('replaced\n');
    expect((await fsp.stat(at('linked.txt'))).nlink).toBe(1);
  });

  test('missing parents are created inside the root; a parent that is a file is FS_NOT_DIRECTORY', async () => {
    await fs.writeText(await resolve('a/b/c/d.txt'), 'deep');
    expect(await fsp.readFile(at('a/b/c/d.txt'), 'utf8')).toBe('deep');
    await fsp.writeFile(at('plain'), 'x');
    expect(await codeOf(resolve('plain/x.txt').then((t) => fs.writeText(t, 'x')))).toBe('FS_NOT_DIRECTORY');
    expect(await codeOf(resolve('plain/deeper/x.txt').then((t) => fs.writeText(t, 'x')))).toBe('FS_NOT_DIRECTORY');
    expect(await codeOf(resolve('plain/x.txt').then((t) => fs.readText(t)))).toBe('FS_NOT_FOUND');
    expect(await fs.stat(await resolve('plain/x.txt'))).toBeUndefined();
    expect(await fsp.readFile(at('plain'), 'utf8')).toBe('x');
  });

  /** A provider whose temp-file open first runs `hook`: after the swap's check, before publication. */
  function racedProvider(hook: () => void) {
    const open = ((path: Parameters<typeof fsp.open>[0], ...rest: unknown[]) => {
      if (String(path).endsWith('.dsh-tmp')) hook();
      return (fsp.open as (...a: unknown[]) => ReturnType<typeof fsp.open>)(path, ...rest);
    }) as typeof fsp.open;
    return createLocalProvider({ root: area.root, io: { ...fsp, open } });
  }

  test('a swap expecting nothing never overwrites a creator that raced the check', async () => {
    const t = await resolve('race.txt');
    let fired = false;
    const provider = racedProvider(() => {
      if (!fired) writeFileSync(at('race.txt'), 'the other creator');
      fired = true;
    });
    const result = await provider.swap(t, { expect: { kind: 'absent' }, bytes: utf8('mine') });
    expect(result).toEqual({ ok: false, current: { kind: 'present', version: contentVersion(utf8('the other creator')) } });
    expect(await fsp.readFile(at('race.txt'), 'utf8')).toBe('the other creator');
  });

  test('through the seam, a raced create is FS_NOT_OBSERVED when guarded and retried when not', async () => {
    let fired = 0;
    const seam = createFs(racedProvider(() => fired++ === 0 && writeFileSync(at('c.txt'), 'the other creator')));
    const t = await seam.resolve('c.txt');
    expect(await codeOf(seam.writeText(t, 'mine', { kind: 'createIfAbsent' }))).toBe('FS_NOT_OBSERVED');
    expect(await fsp.readFile(at('c.txt'), 'utf8')).toBe('the other creator');
    await fsp.unlink(at('c.txt'));
    fired = 0;
    // Unguarded: the seam reads again and publishes over what it has now seen.
    expect((await seam.writeText(t, 'mine')).operation).toBe('update');
    expect(await fsp.readFile(at('c.txt'), 'utf8')).toBe('mine');
  });

  test('a swap expecting a version re-checks before the rename: a writer that ignores our lock is not overwritten', async () => {
    const t = await resolve('g.txt');
    const first = await fs.writeText(t, 'base\n');
    const other = utf8('edited by someone else\n');
    const provider = racedProvider(() => writeFileSync(at('g.txt'), other));
    const result = await provider.swap(t, { expect: { kind: 'present', version: first.version }, bytes: utf8('mine\n') });
    expect(result).toEqual({ ok: false, current: { kind: 'present', version: contentVersion(other) } });
    expect(await fsp.readFile(at('g.txt'), 'utf8')).toBe('edited by someone else\n');
    // Same bytes rewritten by the other writer (a no-op formatter) are not a conflict (V2).
    const again = await provider.swap(t, { expect: { kind: 'present', version: contentVersion(other) }, bytes: utf8('mine\n') });
    expect(again).toEqual({ ok: true, existed: true, version: contentVersion(utf8('mine\n')) });
    expect(await fsp.readFile(at('g.txt'), 'utf8')).toBe('mine\n');
  });

  test('no temp file is left after a success or a handled failure', async () => {
    const t = await resolve('h.txt');
    const w = await fs.writeText(t, 'one\n');
    expect(await codeOf(fs.writeText(t, 'x', { kind: 'createIfAbsent' }))).toBe('FS_NOT_OBSERVED');
    expect(await codeOf(fs.writeText(t, 'x', { kind: 'replaceIfVersion', version: contentVersion(utf8('zzz')) }))).toBe('FS_STALE_VERSION');
    expect(await codeOf(fs.editText(t, { oldString: 'absent', newString: 'y' }))).toBe('FS_EDIT_NOT_FOUND');
    const ac = new AbortController();
    ac.abort();
    expect(await codeOf(fs.writeText(t, 'x', undefined, { signal: ac.signal }))).toBe('FS_ABORTED');
    expect(await fsp.readdir(area.root)).toEqual(['h.txt']);
    expect((await fs.readText(t)).version).toBe(w.version);
  });

  test('an abort that lands after the temp is opened leaves the target and no temp behind', async () => {
    const t = await resolve('ab.txt');
    await fs.writeText(t, 'kept');
    const ac = new AbortController();
    const provider = racedProvider(() => ac.abort());
    const err = await provider.swap(t, { expect: { kind: 'any' }, bytes: utf8('not published'), signal: ac.signal }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'FS_ABORTED' });
    expect(await fsp.readFile(at('ab.txt'), 'utf8')).toBe('kept');
  });

  test('temp names follow the documented pattern and never exceed NAME_MAX', async () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 255, unit: 'grapheme' }), (name) => {
        const tmp = tempName(name);
        expect(TEMP_NAME_PATTERN.test(tmp)).toBe(true);
        expect(isTempName(tmp)).toBe(true);
        expect(Buffer.byteLength(tmp)).toBeLessThanOrEqual(255);
      }),
      { numRuns: 200 },
    );
    expect(isTempName('.notes.dsh-tmp')).toBe(false);
    expect(isTempName('a.0123456789abcdef0123456789abcdef.dsh-tmp')).toBe(false);
  });

  test('a long file name still gets a valid temp name', async () => {
    const name = 'é'.repeat(127); // 254 bytes
    await fs.writeText(await resolve(name), 'long');
    expect(await fsp.readFile(at(name), 'utf8')).toBe('long');
  });

  test('the syscalls are in the durable order: O_EXCL|O_NOFOLLOW temp, fsync, rename (or link for a new file), fsync(dir)', async ({ skip }) => {
    if (!hasStrace()) skip();
    const build = buildForChildren();
    const code = `
      const { createLocalFs } = await import(${JSON.stringify(build.localUrl)});
      const fs = createLocalFs({ root: ${JSON.stringify(area.root)} });
      const t = await fs.resolve('s.txt');
      process.stderr.write('<<begin>>\\n');
      await fs.writeText(t, 'payload');
    `;
    const log = join(area.area, 'strace.log');
    execFileSync(
      'strace',
      ['-f', '-qq', '-o', log, '-e', 'trace=openat,open,fsync,fdatasync,rename,renameat,renameat2,link,linkat,write', process.execPath, '--input-type=module', '-e', code],
      { stdio: 'pipe', timeout: 30_000 },
    );
    const lines = (await fsp.readFile(log, 'utf8')).split('\n');
    const after = lines.slice(lines.findIndex((l) => l.includes('<<begin>>')));
    const find = (re: RegExp) => after.findIndex((l) => re.test(l));
    const tmpOpen = find(/open(at)?\(.*\.dsh-tmp", .*O_EXCL.*= \d+$/);
    // The directory opened last before the temp (the write first tries to read the file).
    const dirRe = new RegExp(`open(at)?\\(.*"${area.root}", .*O_DIRECTORY.*= \\d+$`);
    const dirOpen = after.findLastIndex((l, i) => i < tmpOpen && dirRe.test(l));
    expect(dirOpen).toBeGreaterThan(-1);
    expect(tmpOpen).toBeGreaterThan(dirOpen);
    expect(after[tmpOpen]).toMatch(/O_CREAT/);
    expect(after[tmpOpen]).toMatch(/O_NOFOLLOW/);
    const dirFd = /= (\d+)$/.exec(after[dirOpen]!)![1];
    const tmpFd = /= (\d+)$/.exec(after[tmpOpen]!)![1];
    // The temp is created inside the verified directory, through its descriptor.
    expect(after[tmpOpen]).toContain(`/proc/self/fd/${dirFd}/`);
    // A new file is published with link (it must not replace one created meanwhile), a rewrite with rename.
    const rename = find(/(rename|link)(at2?)?\(.*\.dsh-tmp".*\/s\.txt"/);
    const syncOf = (fd: string) => after.findIndex((l, i) => i > tmpOpen && new RegExp(`\\bf(data)?sync\\(${fd}\\)`).test(l));
    expect(rename).toBeGreaterThan(tmpOpen);
    expect(syncOf(tmpFd!)).toBeGreaterThan(tmpOpen);
    expect(syncOf(tmpFd!)).toBeLessThan(rename);
    expect(syncOf(dirFd!)).toBeGreaterThan(rename);
  }, 60_000);
});

describe('symlinks inside the root', () => {
  test('followed for read and write; the link is kept; aliases share one targetKey and one lock', async () => {
    await fsp.mkdir(at('real'));
    await fsp.writeFile(at('real/f.txt'), 'base\n');
    await fsp.symlink('real', at('dirlink'));
    await fsp.symlink('real/f.txt', at('filelink'));
    await fsp.symlink(at('filelink'), at('abslink'));
    await fsp.symlink('../root/real/f.txt', at('reenter')); // leaves to the root's parent, comes back
    const keys = await Promise.all(['real/f.txt', 'dirlink/f.txt', 'filelink', 'abslink', 'reenter', 'real/../real/./f.txt'].map(resolve));
    expect(new Set(keys.map((k) => k.targetKey))).toEqual(new Set([at('real/f.txt')]));

    const base = (await fs.readText(keys[0]!)).version;
    const attempts = await Promise.allSettled(
      keys.map((k, i) => fs.writeText(k, `writer ${i}\n`, { kind: 'replaceIfVersion', version: base })),
    );
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    for (const a of attempts) if (a.status === 'rejected') expect(a.reason).toMatchObject({ code: 'FS_STALE_VERSION' });
    expect((await fsp.lstat(at('filelink'))).isSymbolicLink()).toBe(true);
    expect((await fsp.lstat(at('dirlink'))).isSymbolicLink()).toBe(true);
    expect(await fsp.readlink(at('filelink'))).toBe('real/f.txt');
  });

  test('listDir lists links without following those that leave the root', async () => {
    await fsp.writeFile(at('a.txt'), 'aa');
    await fsp.writeFile(join(area.outside, 'secret'), 'secret');
    await fsp.symlink('a.txt', at('in-link'));
    await fsp.symlink(join(area.outside, 'secret'), at('out-link'));
    await fsp.symlink('nowhere', at('dangling'));
    await fsp.mkdir(at('d'));
    const entries = await fs.listDir(await resolve('.'));
    expect(entries.map((e) => [e.name, e.type, e.size])).toEqual([
      ['a.txt', 'file', 2],
      ['d', 'directory', undefined],
      ['dangling', 'other', undefined],
      ['in-link', 'file', 2],
      ['out-link', 'other', undefined],
    ]);
    const inLink = entries.find((e) => e.name === 'in-link')!;
    expect(inLink.target.targetKey).toBe(at('a.txt'));
    const outLink = entries.find((e) => e.name === 'out-link')!;
    expect(await codeOf(fs.readText(outLink.target))).toBe('FS_OUTSIDE_ROOT');
  });
});

describe('special files never block (T2) and reads are bounded', () => {
  test('a FIFO: stat says other; read, write, edit and remove refuse without blocking', async () => {
    execFileSync('mkfifo', [at('fifo')]);
    const t = await resolve('fifo');
    expect(await noHang(fs.stat(t), at('fifo'))).toMatchObject({ type: 'other' });
    expect(await codeOf(noHang(fs.readText(t), at('fifo')))).toBe('FS_NOT_REGULAR_FILE');
    expect(await codeOf(noHang(fs.readBytes(t, { maxBytes: 10 }), at('fifo')))).toBe('FS_NOT_REGULAR_FILE');
    expect(await codeOf(noHang(fs.writeText(t, 'x'), at('fifo')))).toBe('FS_NOT_REGULAR_FILE');
    expect(await codeOf(noHang(fs.editText(t, { oldString: 'a', newString: 'b' }), at('fifo')))).toBe('FS_NOT_REGULAR_FILE');
    expect(await codeOf(noHang(fs.remove(t), at('fifo')))).toBe('FS_NOT_REGULAR_FILE');
    expect((await fsp.lstat(at('fifo'))).isFIFO()).toBe(true);
  });

  test('a socket and a character device (/dev/zero made inside the root) are not regular files', async () => {
    const server: Server = createServer();
    await new Promise<void>((r) => server.listen(at('sock'), r));
    try {
      const s = await resolve('sock');
      expect(await fs.stat(s)).toMatchObject({ type: 'other' });
      expect(await codeOf(fs.readText(s))).toBe('FS_NOT_REGULAR_FILE');
    } finally {
      await new Promise((r) => server.close(r));
    }
    let haveDevice = true;
    try {
      execFileSync('mknod', [at('zero'), 'c', '1', '5'], { stdio: 'ignore' });
    } catch {
      haveDevice = false; // not permitted here (unprivileged, or nodev)
    }
    if (haveDevice) {
      const z = await resolve('zero');
      expect(await fs.stat(z)).toMatchObject({ type: 'other' });
      expect(await codeOf(noHang(fs.readBytes(z, { maxBytes: 1 << 20 })))).toBe('FS_NOT_REGULAR_FILE');
      expect(await codeOf(noHang(fs.readText(z)))).toBe('FS_NOT_REGULAR_FILE');
    }
  });

  test('/dev/zero: through a link inside the root it is outside; with /dev as the root it is not a regular file', async () => {
    await fsp.symlink('/dev/zero', at('zero-link'));
    expect(await codeOf(resolve('zero-link'))).toBe('FS_OUTSIDE_ROOT');
    if (!existsSync('/dev/zero')) return;
    const dev = createLocalFs({ root: '/dev' });
    const z = await dev.resolve('/dev/zero');
    expect(await codeOf(noHang(dev.readBytes(z, { maxBytes: 1 << 20 })))).toBe('FS_NOT_REGULAR_FILE');
    expect(await noHang(dev.stat(z))).toMatchObject({ type: 'other' });
  });

  test('st_size is never trusted: a procfs file that reports size 0 is read in full, and bounded', async ({ skip }) => {
    if (!existsSync('/proc/self/status')) skip();
    const proc = createLocalFs({ root: '/proc/self' });
    const t = await proc.resolve('status');
    expect((await fsp.stat(t.targetKey)).size).toBe(0);
    const { bytes } = await proc.readBytes(t, { maxBytes: 1 << 20 });
    expect(Buffer.from(bytes).toString()).toMatch(/^Name:/);
    expect(await codeOf(proc.readBytes(t, { maxBytes: 16 }))).toBe('FS_TOO_LARGE');
  });

  test('a file larger than maxBytes is FS_TOO_LARGE, one exactly maxBytes is read', async () => {
    await fsp.writeFile(at('big'), Buffer.alloc(1000, 97));
    const t = await resolve('big');
    expect(await codeOf(fs.readBytes(t, { maxBytes: 999 }))).toBe('FS_TOO_LARGE');
    expect((await fs.readBytes(t, { maxBytes: 1000 })).bytes.byteLength).toBe(1000);
    const small = createLocalFs({ root: area.root, maxTextBytes: 10 });
    expect(await codeOf(small.readText(await small.resolve('big')))).toBe('FS_TOO_LARGE');
  });

  test('a file that keeps growing while read never yields more than maxBytes', async () => {
    const path = at('growing.log');
    await fsp.writeFile(path, '');
    const child = spawn(process.execPath, [
      '-e',
      `const fs=require('fs');const fd=fs.openSync(${JSON.stringify(path)},'a');const b=Buffer.alloc(65536,120);for(;;)fs.writeSync(fd,b);`,
    ]);
    try {
      while ((await fsp.stat(path)).size < 4 << 20) await new Promise((r) => setTimeout(r, 5));
      const t = await resolve('growing.log');
      for (let i = 0; i < 5; i++) {
        const res = await fs.readBytes(t, { maxBytes: 1 << 20 }).catch((e: { code: string }) => e.code);
        expect(res).toBe('FS_TOO_LARGE');
      }
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('errors are FsErrors with a clear code', () => {
  test('a symlink loop, a name too long, a directory read, a missing file', async () => {
    await fsp.symlink('loop-b', at('loop-a'));
    await fsp.symlink('loop-a', at('loop-b'));
    expect(await codeOf(resolve('loop-a'))).toBe('FS_IO_ERROR');
    const longName = 'n'.repeat(300);
    expect(await codeOf(resolve(longName).then((t) => fs.writeText(t, 'x')))).toBe('FS_INVALID_ARGUMENT');
    expect(await codeOf(resolve(longName).then((t) => fs.readText(t)))).toBe('FS_INVALID_ARGUMENT');
    await fsp.mkdir(at('dir'));
    expect(await codeOf(resolve('dir').then((t) => fs.readText(t)))).toBe('FS_NOT_REGULAR_FILE');
    expect(await codeOf(resolve('dir').then((t) => fs.writeText(t, 'x')))).toBe('FS_NOT_REGULAR_FILE');
    expect(await codeOf(resolve('.').then((t) => fs.writeText(t, 'x')))).toBe('FS_NOT_REGULAR_FILE');
    expect(await codeOf(resolve('dir').then((t) => fs.remove(t)))).toBe('FS_NOT_REGULAR_FILE');
    // The root is refused as the root (D5), whatever its type.
    expect(await codeOf(resolve('.').then((t) => fs.remove(t)))).toBe('FS_INVALID_ARGUMENT');
    expect(await codeOf(resolve('nope.txt').then((t) => fs.readText(t)))).toBe('FS_NOT_FOUND');
    expect(await codeOf(resolve('nope.txt').then((t) => fs.remove(t)))).toBe('FS_NOT_FOUND');
    expect(await codeOf(resolve('nope/x').then((t) => fs.listDir(t)))).toBe('FS_NOT_FOUND');
    await fsp.writeFile(at('file'), 'x');
    expect(await codeOf(resolve('file').then((t) => fs.listDir(t)))).toBe('FS_NOT_DIRECTORY');
  });

  test('the root vanishing is an FsError, not a raw Node error', async () => {
    const t = await resolve('x.txt');
    await fsp.rm(area.root, { recursive: true });
    const dot = await resolve('.');
    for (const op of [() => fs.readText(t), () => fs.writeText(t, 'x'), () => fs.listDir(dot), () => fs.remove(t)]) {
      expect(await codeOf(op())).toBe('FS_NOT_FOUND');
    }
    expect(await fs.stat(t)).toBeUndefined();
    await fsp.mkdir(area.root);
  });
});

describe('versions (V1–V4) on a real disk', () => {
  test('same-size rewrites that restore atime and mtime (ns) are seen; identical bytes keep the version', async () => {
    const t = await resolve('v.txt');
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.nat(), async (bytes, flip) => {
        const w = await fs.writeBytes(t, bytes);
        expect((await fs.stat(t))?.version).toBe(w.version);
        const changed = new Uint8Array(bytes);
        const i = flip % changed.length;
        changed[i] = changed[i]! ^ 0xff;
        await writeOutOfBand(at('v.txt'), changed, true);
        const after = await fs.stat(t);
        expect(after?.version).not.toBe(w.version);
        expect(after?.version).toBe(contentVersion(changed));
        // A touch (or a no-op formatter) keeps the version.
        await writeOutOfBand(at('v.txt'), changed);
        expect((await fs.stat(t))?.version).toBe(contentVersion(changed));
      }),
      { numRuns: 25 },
    );
  });

  test('a clock far in the future (every entry trusted) still sees out-of-band changes through ctime', async () => {
    const trusting = createLocalFs({ root: area.root, clock: () => BigInt(Date.now() + 3_600_000) * 1_000_000n });
    const t = await trusting.resolve('c.txt');
    await trusting.writeText(t, 'aaaa');
    await trusting.stat(t);
    await trusting.stat(t);
    await writeOutOfBand(at('c.txt'), utf8('bbbb'), true);
    expect((await trusting.stat(t))?.version).toBe(contentVersion(utf8('bbbb')));
  });
});

describe('stale targets: the tree changed between resolve and use', () => {
  for (const anchoring of ['proc', 'inode'] as const) {
    test(`[${anchoring}] a directory swapped for a link to outside is refused for every operation`, async () => {
      const local = createLocalFs({ root: area.root, anchoring });
      await fsp.mkdir(at('sub'));
      await fsp.writeFile(at('sub/f.txt'), 'inside\n');
      await fsp.writeFile(join(area.outside, 'f.txt'), 'outside secret\n');
      const t = await local.resolve('sub/f.txt');
      const fresh = await local.resolve('sub/new.txt');
      const dir = await local.resolve('sub');
      await fsp.rename(at('sub'), at('parked'));
      await fsp.symlink(area.outside, at('sub'));
      await ageAtimes(area.outside);
      const before = await treeDigest(area.outside);
      const ops: [string, () => Promise<unknown>][] = [
        ['stat', () => local.stat(t)],
        ['read', () => local.readText(t)],
        ['readBytes', () => local.readBytes(t, { maxBytes: 100 })],
        ['write', () => local.writeText(t, 'escaped')],
        ['write new', () => local.writeText(fresh, 'escaped')],
        ['edit', () => local.editText(t, { oldString: 'secret', newString: 'escaped' })],
        ['remove', () => local.remove(t)],
        ['list', () => local.listDir(dir)],
        ['stat dir', () => local.stat(dir)],
      ];
      for (const [what, op] of ops) expect(`${what}: ${await codeOf(op())}`).toBe(`${what}: FS_OUTSIDE_ROOT`);
      expect(await treeDigest(area.outside)).toBe(before);
    });

    test(`[${anchoring}] a file swapped for a link inside the root is followed; for a link outside, refused`, async () => {
      const local = createLocalFs({ root: area.root, anchoring });
      await fsp.writeFile(at('f.txt'), 'f\n');
      await fsp.writeFile(at('g.txt'), 'g\n');
      const t = await local.resolve('f.txt');
      await fsp.rm(at('f.txt'));
      await fsp.symlink('g.txt', at('f.txt'));
      expect((await local.readText(t)).text).toBe('g\n');
      await local.writeText(t, 'through\n');
      expect(await fsp.readFile(at('g.txt'), 'utf8')).toBe('through\n');
      expect((await fsp.lstat(at('f.txt'))).isSymbolicLink()).toBe(true);
      await fsp.rm(at('f.txt'));
      await fsp.symlink(join(area.outside, 'nothing-here'), at('f.txt'));
      expect(await codeOf(local.writeText(t, 'x'))).toBe('FS_OUTSIDE_ROOT');
      expect(await fsp.readdir(area.outside)).toEqual([]);
    });
  }

  test('a forged target whose key runs through a link is refused by the anchored open (defence in depth)', async () => {
    await fsp.writeFile(join(area.outside, 'secret'), 'secret');
    await fsp.symlink(area.outside, at('out'));
    const forged: FsTarget = { targetKey: FsTargetKey(at('out/secret')), displayPath: at('out/secret') };
    const provider = fs.provider;
    expect(await codeOf(provider.read(forged, { maxBytes: 100 }))).toBe('FS_OUTSIDE_ROOT');
    expect(await codeOf(provider.swap(forged, { expect: { kind: 'any' }, bytes: utf8('x') }))).toBe('FS_OUTSIDE_ROOT');
    expect(await codeOf(provider.swap(forged, { expect: { kind: 'any' }, bytes: null }))).toBe('FS_OUTSIDE_ROOT');
    expect(await codeOf(provider.stat(forged, {}))).toBe('FS_OUTSIDE_ROOT');
    expect(await fsp.readFile(join(area.outside, 'secret'), 'utf8')).toBe('secret');
  });
});

describe('sweepTemps', () => {
  test('removes only stale temps of our own pattern', async () => {
    const provider = createLocalProvider({ root: area.root });
    await fsp.mkdir(at('d/e'), { recursive: true });
    const stale = [at('.a.txt.0123456789abcdef0123456789abcdef.dsh-tmp'), at('d/e/.b.0123456789abcdef0123456789abcdef.dsh-tmp')];
    const fresh = at('d/.c.fedcba9876543210fedcba9876543210.dsh-tmp');
    const foreign = [at('.a.txt.tmp'), at('d/notes.dsh-tmp'), at('d/.x.0123.dsh-tmp')];
    for (const p of [...stale, fresh, ...foreign]) await fsp.writeFile(p, 'x');
    const old = new Date(Date.now() - 3_600_000);
    for (const p of [...stale, ...foreign]) await fsp.utimes(p, old, old);
    await fsp.symlink(area.outside, at('d/out'));
    await fsp.writeFile(join(area.outside, '.o.0123456789abcdef0123456789abcdef.dsh-tmp'), 'x');
    await fsp.utimes(join(area.outside, '.o.0123456789abcdef0123456789abcdef.dsh-tmp'), old, old);
    expect(await provider.sweepTemps()).toEqual([...stale].sort());
    for (const p of [fresh, ...foreign]) expect(existsSync(p)).toBe(true);
    expect(existsSync(join(area.outside, '.o.0123456789abcdef0123456789abcdef.dsh-tmp'))).toBe(true);
    expect(await provider.sweepTemps({ olderThanMs: 0 })).toEqual([fresh]);
    await fsp.rm(join(area.outside, '.o.0123456789abcdef0123456789abcdef.dsh-tmp'));
  });

  test('listDir and directory versions do not show in-flight temps', async () => {
    await fsp.writeFile(at('.f.0123456789abcdef0123456789abcdef.dsh-tmp'), 'x');
    await fsp.writeFile(at('f'), 'x');
    expect((await fs.listDir(await resolve('.'))).map((e) => e.name)).toEqual(['f']);
    const withTemp = (await fs.stat(await resolve('.')))?.version;
    await fsp.rm(at('.f.0123456789abcdef0123456789abcdef.dsh-tmp'));
    expect((await fs.stat(await resolve('.')))?.version).toBe(withTemp);
  });
});

function hasStrace(): boolean {
  try {
    execFileSync('strace', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

