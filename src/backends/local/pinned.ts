import type { BigIntStats, Stats } from 'node:fs';

/**
 * The read of a small file through an O_PATH pin of its inode, and of a directory's files that
 * way, for searches. Both functions are self-contained (they refer to nothing outside themselves
 * but their arguments): search's read workers run their very source text.
 */

/** The calls and flags the pinned reads use (node:fs, and Linux's O_PATH, which node lacks). */
export interface PinnedIo {
  openSync(path: string, flags: number): number;
  fstatSync(fd: number, options: { bigint: true }): BigIntStats;
  fstatSync(fd: number): Stats;
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: null): number;
  closeSync(fd: number): void;
  readlinkSync(path: string): string;
  readonly O_PATH: number;
  readonly O_NOFOLLOW: number;
  readonly O_DIRECTORY: number;
  /** How the pinned inode is opened for reading (never following a link, never blocking). */
  readonly readFlags: number;
  /**
   * Where given (a process of its own, never the caller's), a directory is held as the working
   * directory rather than by a descriptor: its files are then opened by name relative to it, as
   * openat would, instead of through /proc/self/fd.
   */
  readonly chdir?: (dir: string) => void;
}

/** What a pinned read found at a name. */
export type PinnedRead =
  | { readonly kind: 'bytes'; readonly bytes: Buffer }
  | { readonly kind: 'absent' }
  | { readonly kind: 'link' }
  | { readonly kind: 'other'; readonly st: BigIntStats }
  /** Larger than asked. */
  | { readonly kind: 'large' }
  /** Changed while read (its stat moved), or replaced once pinned. */
  | { readonly kind: 'changed' };

/**
 * The bytes of the entry at `path` (in a verified directory, through /proc), read through an
 * O_PATH pin: its type is checked on the pinned inode, and that very inode is opened, so a
 * special file swapped in after a check by name is never opened. Throws other errors as raised.
 */
export function pinnedRead(io: PinnedIo, path: string, maxBytes: number): PinnedRead {
  let pinned: number | undefined;
  let fd: number | undefined;
  let held = false;
  try {
    // No stack trace: a name not there (yet) is a common answer.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      pinned = io.openSync(path, io.O_PATH | io.O_NOFOLLOW);
    } catch (err) {
      if ((err as { code?: unknown }).code === 'ENOENT') return { kind: 'absent' };
      throw err;
    } finally {
      Error.stackTraceLimit = limit;
    }
    held = true;
    const st = io.fstatSync(pinned, { bigint: true });
    if (st.isSymbolicLink()) return { kind: 'link' };
    if (!st.isFile()) return { kind: 'other', st };
    if (st.size > BigInt(maxBytes)) return { kind: 'large' };
    fd = io.openSync(`/proc/self/fd/${pinned}`, io.readFlags & ~io.O_NOFOLLOW);
    io.closeSync(pinned);
    pinned = undefined;
    const size = Number(st.size);
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    for (let n; got < size && (n = io.readSync(fd, buf, got, size - got, null)) > 0; ) got += n;
    // A file that changed (grew, shrank, was rewritten) while read shows it in its stat.
    const now = io.fstatSync(fd, { bigint: true });
    const same = now.dev === st.dev && now.ino === st.ino && now.size === st.size && now.mtimeNs === st.mtimeNs && now.ctimeNs === st.ctimeNs;
    return got === size && same ? { kind: 'bytes', bytes: buf } : { kind: 'changed' };
  } catch (err) {
    // Replaced once pinned (a path-based filesystem drops the replaced node's path).
    if (held && (err as { code?: unknown }).code === 'ENOENT') return { kind: 'changed' };
    throw err;
  } finally {
    if (fd !== undefined) io.closeSync(fd);
    if (pinned !== undefined) io.closeSync(pinned);
  }
}

/**
 * The bytes of the regular file at `path` (in a verified directory), opened directly with
 * `readFlags` (non-blocking, never following a link) and refused by its descriptor's type before
 * any byte is read: five calls where a pinned read makes seven. A special file swapped in at the
 * name after the listing is opened (without blocking) and closed unread; `pinnedRead` never opens
 * one (docs/local.md). Self-contained, like `pinnedRead`.
 */
export function openedRead(io: PinnedIo, path: string, maxBytes: number): PinnedRead {
  let fd: number | undefined;
  try {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      fd = io.openSync(path, io.readFlags);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === 'ENOENT') return { kind: 'absent' };
      // O_NOFOLLOW on a link.
      if (code === 'ELOOP') return { kind: 'link' };
      throw err;
    } finally {
      Error.stackTraceLimit = limit;
    }
    // Number stats: node 20 builds four Dates for each BigInt one. Times in milliseconds hold a
    // quarter of a microsecond, finer than the clock tick a write's timestamp takes.
    const st = io.fstatSync(fd);
    if (!st.isFile()) return { kind: 'other', st: io.fstatSync(fd, { bigint: true }) };
    if (st.size > maxBytes) return { kind: 'large' };
    const size = st.size;
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    for (let n; got < size && (n = io.readSync(fd, buf, got, size - got, null)) > 0; ) got += n;
    // A file that changed (grew, shrank, was rewritten) while read shows it in its stat.
    const now = io.fstatSync(fd);
    const same = now.size === st.size && now.mtimeMs === st.mtimeMs && now.ctimeMs === st.ctimeMs;
    return got === size && same ? { kind: 'bytes', bytes: buf } : { kind: 'changed' };
  } finally {
    if (fd !== undefined) io.closeSync(fd);
  }
}

/**
 * Search's reads of some files of the directory `dir` (a real path inside the root): per name, its
 * bytes; null when `contains` is given and the file is text (`isText`) without those bytes; or
 * undefined, for the caller to read the usual way: not a small regular file, changed while read,
 * failed, or the directory not (or no longer) at `dir`. The directory is held open, and its real
 * path read back before its first file and after its last; if it moved, nothing read there counts.
 * The bytes answered take from `budget.left`: the first file that does not fit sets it to -1 and
 * ends the reads (it and the files after it are undefined).
 */
export function readDirFiles(
  io: PinnedIo,
  read: typeof pinnedRead,
  dir: string,
  names: readonly string[],
  maxBytes: number,
  contains: Buffer | undefined,
  isText: (bytes: Buffer) => boolean,
  budget: { left: number },
): (Buffer | null | undefined)[] {
  const out: (Buffer | null | undefined)[] = new Array<undefined>(names.length).fill(undefined);
  if (budget.left < 0) return out;
  let dirFd: number | undefined;
  try {
    if (io.chdir === undefined) dirFd = io.openSync(dir, io.O_DIRECTORY);
    else io.chdir(dir);
  } catch {
    return out;
  }
  try {
    const self = dirFd === undefined ? '/proc/self/cwd' : `/proc/self/fd/${dirFd}`;
    const prefix = dirFd === undefined ? '' : `${self}/`;
    if (io.readlinkSync(self) !== dir) return out;
    for (let i = 0; i < names.length; i++) {
      let found: PinnedRead;
      try {
        found = read(io, `${prefix}${names[i]}`, maxBytes);
      } catch {
        continue;
      }
      if (found.kind !== 'bytes') continue;
      const bytes = found.bytes;
      if (contains !== undefined && bytes.indexOf(contains) === -1 && isText(bytes)) {
        out[i] = null;
      } else if (bytes.length <= budget.left) {
        out[i] = bytes;
        budget.left -= bytes.length;
      } else {
        budget.left = -1;
        break;
      }
    }
    if (io.readlinkSync(self) !== dir) out.fill(undefined);
  } finally {
    if (dirFd !== undefined) io.closeSync(dirFd);
  }
  return out;
}
