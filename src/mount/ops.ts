import { posix } from 'node:path';
import { constants } from 'node:fs';
import { FsTargetKey, type FsDirEntry, type FsTarget } from '../seam/index.js';
import { FILE_MODE, OWNER, permissionsOf, statOf, typeOfMode, type Stat } from './attrs.js';
import { ERRNO, Errno, fail } from './errno.js';
import { DEFERRED } from './handles.js';
import { SENT, UNVERSIONED_STAT, helpers, linkAt, lookup, remember, type Cb, type Helpers, type Link, type OpsContext } from './helpers.js';

export type { OpsContext } from './helpers.js';

const UINT32_MAX = 0xffffffff;

function parentOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at <= 0 ? '/' : path.slice(0, at);
}
const O_ACCMODE = 3;

type Ops = Record<string, (...args: never[]) => void>;

/**
 * The FUSE operations over a FileSystem. Each answers on the event loop and never blocks it; a
 * contract failure becomes the errno of ERRNO_OF_CODE, and what the contract cannot hold
 * (links, special files, ownership, permission bits) is refused rather than dropped.
 */
export function createOps(ctx: OpsContext): Ops {
  const h = helpers(ctx);
  return { ...readOps(h), ...fileOps(h), ...treeOps(h), ...metaOps(h) };
}
/** getattr and readdir: what a program sees of names and attributes. */
function readOps(h: Helpers): Ops {
  const { reply, target, info, inodes, started } = h;
  const { fs, files } = h.ctx;
  const { cache } = h.ctx;
  /** A directory's entries and the attributes shown for them. */
  const listing = async (t: FsTarget, withStats: boolean) => {
    // With stats (when caching), a listing answers the getattr that follows for each name;
    // readdir lists without (find and ls need no more, and a local directory then needs no
    // lstat per name), and the first getattr that misses lists again with them.
    const entries = await fs.listDir(t, { stats: withStats && cache.enabled });
    // An entry whose target is not its own name is a link (listings type it by what it leads
    // to): shown as a link, so find and ls do not take it for what it leads to.
    const stats = entries.map((e) => {
      const own = posix.join(t.targetKey, e.name);
      if (e.target.targetKey !== own) return statOf('link', 0, inodes.of(FsTargetKey(own)), started);
      return statOf(e.type, e.size ?? 0, inodes.of(e.target.targetKey), e.mtimeMs ?? started, e.executable === true);
    });
    return { entries, stats };
  };
  /** Lists `dir` into the cache, unless the mount changed something meanwhile. */
  const listInto = async (dir: string) => {
    const epoch = cache.epoch;
    const t = await target(dir);
    const { entries, stats } = await listing(t, true);
    if (cache.epoch === epoch) known(dir, entries, stats);
  };
  const known = (dir: string, entries: readonly FsDirEntry[], stats: readonly Stat[]) => {
    remember(h, dir, entries, stats);
    cache.listed(dir, entries.map((e) => e.name));
  };
  const getattr = async (path: string): Promise<Stat> => {
    let hit = cache.get(path);
    if (hit === undefined && cache.enabled && path !== '/') {
      // A name the kernel looks up before creating it: its directory's listing says it is not there.
      if (cache.absent(path)) fail(ERRNO.ENOENT);
      await cache.listAhead(parentOf(path), () => listInto(parentOf(path)));
      hit = cache.get(path);
      if (hit === undefined && cache.absent(path)) fail(ERRNO.ENOENT);
    }
    if (hit !== undefined) {
      const node = files.node({ targetKey: hit.key, displayPath: path });
      return node === undefined ? hit.stat : { ...hit.stat, size: node.length, blocks: Math.ceil(node.length / 512) };
    }
    const found = await lookup(h, path);
    if (found.link !== undefined) return statOf('link', Buffer.byteLength(found.link), inodes.of(found.target.targetKey), started);
    const t = found.target;
    const i = await info(t);
    const node = i.type === 'file' ? files.node(t) : undefined;
    const size = node !== undefined ? node.length : (i.size ?? 0);
    const stat = statOf(i.type, size, inodes.of(t.targetKey, path === '/'), i.mtimeMs ?? started, i.executable === true);
    if (node === undefined) cache.set(path, t.targetKey, stat);
    return stat;
  };
  return {
    getattr: (path: string, cb: Cb) => reply('getattr', cb, () => getattr(path)),

    readdir: (path: string, cb: Cb) =>
      reply('readdir', cb, async () => {
        const epoch = cache.epoch;
        const t = await target(path);
        const { entries, stats } = await listing(t, false);
        const self = statOf('directory', 0, inodes.of(t.targetKey, path === '/'), started);
        if (cache.enabled && cache.epoch === epoch) known(path, entries, stats);
        cb(0, ['.', '..', ...entries.map((e) => e.name)], [self, self, ...stats]);
        return SENT;
      }),

  };
}

/** Open files: held whole (large ones as ranges over the file), published on flush, fsync and release. */
function fileOps(h: Helpers): Ops {
  const { reply, target, writable, info } = h;
  const { fs, files, cache } = h.ctx;
  const published = (path: string, fd: number, publish: () => Promise<void>) => {
    const writes = files.writes(fd);
    return publish().finally(() => writes && cache.forget(path));
  };
  return {
    open: (path: string, flags: number, cb: Cb) =>
      reply('open', cb, async () => {
        const write = (flags & O_ACCMODE) !== constants.O_RDONLY;
        if (write) writable();
        if (write) cache.forget(path);
        // The kernel looked the name up just before: its cached attributes tell the type.
        const hit = write ? undefined : cache.get(path);
        const t = await target(path);
        const type = hit === undefined ? (await info(t)).type : typeOfMode(hit.stat.mode);
        if (type === 'directory') return write ? fail(ERRNO.EISDIR) : fail(ERRNO.EACCES);
        if (type === 'other') return fail(ERRNO.EACCES);
        const fd = await files.open(t, { writable: write, append: (flags & constants.O_APPEND) !== 0, truncate: (flags & constants.O_TRUNC) !== 0 });
        cb(0, fd);
        return SENT;
      }),

    create: (path: string, mode: number, cb: Cb) =>
      reply('create', cb, async () => {
        writable();
        const t = await h.newTarget(path);
        cache.forget(path);
        // Published at once, empty, so the name exists (and O_EXCL holds) while the program writes.
        const outcome = await fs.writeBytes(t, new Uint8Array(0), { kind: 'createIfAbsent' }, DEFERRED).catch((err: unknown) => {
          throw (err as { code?: string }).code === 'FS_NOT_OBSERVED' ? new Errno(ERRNO.EEXIST) : err;
        });
        files.published(t);
        cache.setKey(path, t.targetKey, false);
        void mode; // Permission bits are not recorded; see docs/mount.md.
        const fd = await files.open(t, { writable: true, append: false, truncate: false, created: outcome.version });
        cb(0, fd);
        return SENT;
      }),

    read: (_path: string, fd: number, buf: Buffer, len: number, pos: number, cb: Cb) =>
      reply('read', cb, async () => files.read(fd, buf, len, pos)),

    write: (path: string, fd: number, buf: Buffer, len: number, pos: number, cb: Cb) =>
      reply('write', cb, async () => {
        cache.forget(path);
        return files.write(fd, buf, len, pos);
      }),

    ftruncate: (path: string, fd: number, size: number, cb: Cb) =>
      reply('ftruncate', cb, async () => {
        writable();
        cache.forget(path);
        files.truncate(fd, size);
      }),

    truncate: (path: string, size: number, cb: Cb) =>
      reply('truncate', cb, async () => {
        writable();
        cache.forget(path);
        const t = await target(path);
        const fd = await files.open(t, { writable: true, append: false, truncate: false });
        try {
          files.truncate(fd, size);
        } finally {
          await files.release(fd);
        }
      }),

    // A publish changes the size and time the provider reports: dropped after it.
    flush: (path: string, fd: number, cb: Cb) => reply('flush', cb, () => published(path, fd, () => files.flush(fd))),
    fsync: (path: string, _datasync: number, fd: number, cb: Cb) => reply('fsync', cb, () => published(path, fd, () => files.sync(fd))),
    release: (path: string, fd: number, cb: Cb) => reply('release', cb, () => published(path, fd, () => files.release(fd))),

  };
}

/** Names: removal, directories, renames. */
function treeOps(h: Helpers): Ops {
  const { target, writable, info, inodes } = h;
  const { fs, files, cache } = h.ctx;
  // What a change touched is dropped once it is done (a getattr racing it may have cached the old).
  const reply = (op: string, cb: Cb, fn: () => Promise<unknown>, ...paths: string[]) =>
    h.reply(op, cb, () => fn().finally(() => paths.forEach((p) => cache.forgetTree(p))));
  return {
    unlink: (path: string, cb: Cb) =>
      reply('unlink', cb, async () => {
        writable();
        // A link's own name goes, never what it leads to.
        const link = await linkAt(h, path);
        if (link !== undefined) return h.ctx.fs.removeLink === undefined ? fail(ERRNO.EPERM) : h.ctx.fs.removeLink(link.target);
        const t = await target(path);
        if ((await info(t)).type === 'directory') return fail(ERRNO.EISDIR);
        await fs.remove(t);
        files.unlinked(t);
      }, path),

    mkdir: (path: string, _mode: number, cb: Cb) =>
      reply('mkdir', cb, async () => {
        writable();
        const t = await h.newTarget(path);
        // The contract's mkdir accepts an existing directory; mkdir(2) does not.
        if ((await fs.stat(t, UNVERSIONED_STAT)) !== undefined) return fail(ERRNO.EEXIST);
        await fs.mkdir(t);
      }, path),

    rmdir: (path: string, cb: Cb) =>
      reply('rmdir', cb, async () => {
        writable();
        await fs.rmdir(await target(path));
      }, path),

    rename: (src: string, dest: string, cb: Cb) =>
      reply('rename', cb, async () => {
        writable();
        // rename(2) follows neither name: a link moves, or is replaced, as itself.
        const [srcLink, destLink] = await Promise.all([linkAt(h, src), linkAt(h, dest)]);
        if (srcLink !== undefined || destLink !== undefined) return renameWithLinks(h, src, dest, srcLink, destLink);
        const [from, to] = await Promise.all([target(src), target(dest)]);
        if (from.targetKey === to.targetKey) return;
        // Unpublished bytes of the source go first, so the name moves with what was written.
        const node = files.node(from);
        if (node !== undefined) await files.publish(node);
        await fs.rename(from, to, { replace: true });
        inodes.moved(from.targetKey, to.targetKey);
        await files.movedTree(from, to);
      }, src, dest),

  };
}

/** What the contract does not record: accepted when it changes nothing, refused otherwise. */
function metaOps(h: Helpers): Ops {
  const { reply, target, info } = h;
  return {
    utimens: (path: string, _atime: number, _mtime: number, cb: Cb) =>
      reply('utimens', cb, async () => {
        // The contract keeps no times: accepted (touch, tar, cp -p rely on it) and not recorded.
        await info(await target(path));
      }),

    chmod: (path: string, mode: number, cb: Cb) =>
      reply('chmod', cb, async () => {
        const t = await target(path);
        const i = await info(t);
        const bits = mode & 0o7777;
        if (bits === permissionsOf(i.type, i.executable === true)) return;
        // A file's x bits are the one mode the contract records: chmod +x, -x, u+x.
        const fs = h.ctx.fs;
        if (i.type !== 'file' || (bits & ~0o111) !== FILE_MODE || fs.setExecutable === undefined) return fail(ERRNO.EPERM);
        h.writable();
        await fs.setExecutable(t, (bits & 0o100) !== 0).finally(() => h.ctx.cache.forget(path));
      }),

    chown: (path: string, uid: number, gid: number, cb: Cb) =>
      reply('chown', cb, async () => {
        await info(await target(path));
        const same = (want: number, have: number) => want === UINT32_MAX || want === -1 || want === have;
        if (!same(uid, OWNER.uid) || !same(gid, OWNER.gid)) return fail(ERRNO.EPERM);
      }),

    readlink: (path: string, cb: Cb) =>
      reply('readlink', cb, async () => {
        const link = await linkAt(h, path);
        if (link === undefined) {
          await info(await target(path));
          return fail(ERRNO.EINVAL);
        }
        cb(0, link.text);
        return SENT;
      }),
    symlink: (src: string, dest: string, cb: Cb) =>
      reply('symlink', cb, async () => {
        const fs = h.ctx.fs;
        if (fs.symlink === undefined) return fail(ERRNO.EPERM);
        h.writable();
        // The text is kept as written; an absolute one names a path of the store, not of the host.
        await fs.symlink(await h.linkTarget(dest), src).finally(() => h.ctx.cache.forget(dest));
      }),
    link: (_src: string, _dest: string, cb: Cb) => cb(-ERRNO.EPERM),
    mknod: (_path: string, _mode: number, _dev: number, cb: Cb) => cb(-ERRNO.EPERM),

    statfs: (_path: string, cb: Cb) =>
      cb(0, { bsize: 4096, frsize: 4096, blocks: 1 << 24, bfree: 1 << 23, bavail: 1 << 23, files: 1 << 20, ffree: 1 << 19, favail: 1 << 19, fsid: 0, flag: 0, namemax: 255 }),
  };
}


/**
 * A rename where either name is a link. A moved link replaces what is at `dest` in one step; a
 * file or directory moved onto a link first removes the link (a moment shows neither at `dest`).
 */
async function renameWithLinks(h: Helpers, src: string, dest: string, srcLink: Link | undefined, destLink: Link | undefined): Promise<void> {
  const { fs, files } = h.ctx;
  if (fs.removeLink === undefined || fs.renameLink === undefined) return fail(ERRNO.EPERM);
  const to = await h.linkTarget(dest);
  if (srcLink !== undefined) {
    if (srcLink.target.targetKey === to.targetKey) return;
    const replaced = destLink === undefined ? await fs.stat(to, UNVERSIONED_STAT) : undefined;
    if (replaced?.type === 'directory') return fail(ERRNO.EISDIR);
    await fs.renameLink(srcLink.target, to, { replace: true });
    if (replaced !== undefined) files.unlinked(to);
    h.inodes.moved(srcLink.target.targetKey, to.targetKey);
    return;
  }
  const from = await h.target(src);
  if ((await h.info(from)).type === 'directory') return fail(ERRNO.ENOTDIR);
  const node = files.node(from);
  if (node !== undefined) await files.publish(node);
  await fs.removeLink(destLink!.target);
  await fs.rename(from, to, { replace: true });
  h.inodes.moved(from.targetKey, to.targetKey);
  await files.movedTree(from, to);
}
