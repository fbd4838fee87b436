/**
 * The floor of the FUSE stack: a filesystem on fuse-native that keeps a tree in plain JS objects
 * and does nothing else (no dsh-fs code). What a program pays through it is what the binding,
 * libfuse and the kernel cost; a dsh-fs mount cannot be faster on the same options.
 */

type Cb = (code: number, ...values: unknown[]) => void;

interface FloorNode {
  readonly ino: number;
  dir: Map<string, FloorNode> | undefined;
  data: Buffer<ArrayBufferLike>;
  mode: number;
  mtime: Date;
}

export type FloorTree = ReadonlyMap<string, Buffer | null>;

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const ENOENT = -2;
const EEXIST = -17;
const ENOTEMPTY = -39;
const EBADF = -9;

/** The fuse-native operations of a floor filesystem seeded with `tree` (relative path → bytes, null: directory). */
export function floorOps(tree: FloorTree): Record<string, unknown> {
  let nextIno = 2;
  const make = (isDir: boolean, data: Buffer<ArrayBufferLike> = Buffer.alloc(0)): FloorNode => ({
    ino: nextIno++,
    dir: isDir ? new Map() : undefined,
    data,
    mode: isDir ? S_IFDIR | 0o755 : S_IFREG | 0o644,
    mtime: new Date(),
  });
  const root: FloorNode = { ...make(true), ino: 1 };
  const split = (path: string) => path.split('/').filter(Boolean);
  const find = (path: string): FloorNode | undefined => {
    let node: FloorNode | undefined = root;
    for (const part of split(path)) node = node?.dir?.get(part);
    return node;
  };
  const parentOf = (path: string): [FloorNode | undefined, string] => {
    const parts = split(path);
    const name = parts.pop() ?? '';
    return [find(parts.join('/')), name];
  };
  for (const [path, bytes] of [...tree].sort(([a], [b]) => (a < b ? -1 : 1))) {
    let node = root;
    const parts = split(path);
    for (const [i, part] of parts.entries()) {
      let next = node.dir!.get(part);
      if (next === undefined) {
        next = i === parts.length - 1 && bytes !== null ? make(false, bytes) : make(true);
        node.dir!.set(part, next);
      }
      node = next;
    }
  }
  const stat = (n: FloorNode) => ({
    mode: n.mode,
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
    size: n.data.length,
    nlink: n.dir ? 2 : 1,
    ino: n.ino,
    mtime: n.mtime,
    atime: n.mtime,
    ctime: n.mtime,
  });
  const fds = new Map<number, FloorNode>();
  let nextFd = 1;
  const openFd = (n: FloorNode) => {
    fds.set(nextFd, n);
    return nextFd++;
  };
  const ok = (cb: Cb) => cb(0);

  return {
    getattr: (path: string, cb: Cb) => {
      const n = find(path);
      return n ? cb(0, stat(n)) : cb(ENOENT);
    },
    readdir: (path: string, cb: Cb) => {
      const n = find(path);
      if (!n?.dir) return cb(ENOENT);
      const names = ['.', '..', ...n.dir.keys()];
      return cb(0, names, [stat(n), stat(n), ...[...n.dir.values()].map(stat)]);
    },
    open: (path: string, _flags: number, cb: Cb) => {
      const n = find(path);
      return n ? cb(0, openFd(n)) : cb(ENOENT);
    },
    create: (path: string, mode: number, cb: Cb) => {
      const [parent, name] = parentOf(path);
      if (!parent?.dir) return cb(ENOENT);
      const n = parent.dir.get(name) ?? make(false);
      n.mode = S_IFREG | (mode & 0o777);
      parent.dir.set(name, n);
      return cb(0, openFd(n));
    },
    read: (_path: string, fd: number, buf: Buffer, len: number, pos: number, cb: Cb) => {
      const n = fds.get(fd);
      if (!n) return cb(EBADF);
      if (pos >= n.data.length) return cb(0);
      return cb(n.data.copy(buf, 0, pos, Math.min(n.data.length, pos + len)));
    },
    write: (_path: string, fd: number, buf: Buffer, len: number, pos: number, cb: Cb) => {
      const n = fds.get(fd);
      if (!n) return cb(EBADF);
      if (pos + len > n.data.length) {
        const grown = Buffer.alloc(pos + len);
        n.data.copy(grown);
        n.data = grown;
      }
      buf.copy(n.data, pos, 0, len);
      n.mtime = new Date();
      return cb(len);
    },
    truncate: (path: string, size: number, cb: Cb) => {
      const n = find(path);
      if (!n) return cb(ENOENT);
      n.data = Buffer.concat([n.data.subarray(0, size), Buffer.alloc(Math.max(0, size - n.data.length))]);
      return cb(0);
    },
    ftruncate: (_path: string, fd: number, size: number, cb: Cb) => {
      const n = fds.get(fd);
      if (!n) return cb(EBADF);
      n.data = Buffer.concat([n.data.subarray(0, size), Buffer.alloc(Math.max(0, size - n.data.length))]);
      return cb(0);
    },
    release: (_path: string, fd: number, cb: Cb) => {
      fds.delete(fd);
      return cb(0);
    },
    flush: (_path: string, _fd: number, cb: Cb) => ok(cb),
    fsync: (_path: string, _d: number, _fd: number, cb: Cb) => ok(cb),
    utimens: (_path: string, _a: unknown, _m: unknown, cb: Cb) => ok(cb),
    chmod: (path: string, mode: number, cb: Cb) => {
      const n = find(path);
      if (!n) return cb(ENOENT);
      n.mode = (n.mode & ~0o7777) | (mode & 0o7777);
      return cb(0);
    },
    chown: (_path: string, _u: number, _g: number, cb: Cb) => ok(cb),
    mkdir: (path: string, _mode: number, cb: Cb) => {
      const [parent, name] = parentOf(path);
      if (!parent?.dir) return cb(ENOENT);
      if (parent.dir.has(name)) return cb(EEXIST);
      parent.dir.set(name, make(true));
      return cb(0);
    },
    unlink: (path: string, cb: Cb) => {
      const [parent, name] = parentOf(path);
      return parent?.dir?.delete(name) ? cb(0) : cb(ENOENT);
    },
    rmdir: (path: string, cb: Cb) => {
      const [parent, name] = parentOf(path);
      const n = parent?.dir?.get(name);
      if (!n?.dir) return cb(ENOENT);
      if (n.dir.size > 0) return cb(ENOTEMPTY);
      parent!.dir!.delete(name);
      return cb(0);
    },
    rename: (src: string, dest: string, cb: Cb) => {
      const [from, a] = parentOf(src);
      const [to, b] = parentOf(dest);
      const n = from?.dir?.get(a);
      if (!n || !to?.dir) return cb(ENOENT);
      from!.dir!.delete(a);
      to.dir.set(b, n);
      return cb(0);
    },
  };
}
