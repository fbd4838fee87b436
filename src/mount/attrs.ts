import type { FsEntryType, FsTargetKey } from '../seam/index.js';

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

/**
 * The permission bits reported: the contract records only a file's executable bit, so these are
 * fixed but for it (chmod to them, or toggling a file's x bits, is all a mount accepts).
 */
export const DIR_MODE = 0o755;
export const FILE_MODE = 0o644;
export const EXECUTABLE_MODE = 0o755;
const LINK_MODE = 0o777;
/** Special files: shown, never opened. */
export const OTHER_MODE = 0;

export interface Stat {
  mode: number;
  uid: number;
  gid: number;
  size: number;
  nlink: number;
  ino: number;
  blksize: number;
  blocks: number;
  atime: number;
  mtime: number;
  ctime: number;
}

export function permissionsOf(type: FsEntryType, executable = false): number {
  return type === 'directory' ? DIR_MODE : type === 'file' ? (executable ? EXECUTABLE_MODE : FILE_MODE) : OTHER_MODE;
}

/** What getattr shows: a link as itself, anything else by its type and executable bit. */
export type Shown = FsEntryType | 'link';

export function modeOf(type: Shown, executable = false): number {
  if (type === 'link') return S_IFLNK | LINK_MODE;
  return (type === 'directory' ? S_IFDIR : S_IFREG) | permissionsOf(type, executable);
}

/** Stable inode numbers for the mount's life: one per target key, never reused. */
export class Inodes {
  readonly #byKey = new Map<FsTargetKey, number>();
  #next = 2;

  of(key: FsTargetKey, isRoot = false): number {
    if (isRoot) return 1;
    let ino = this.#byKey.get(key);
    if (ino === undefined) {
      ino = this.#next++;
      this.#byKey.set(key, ino);
    }
    return ino;
  }

  /** A renamed file keeps its number. */
  moved(from: FsTargetKey, to: FsTargetKey): void {
    const ino = this.#byKey.get(from);
    if (ino === undefined) return;
    this.#byKey.delete(from);
    this.#byKey.set(to, ino);
  }
}

/** The serving process's ids, which every node shows: read once (each read is a system call). */
export const OWNER = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };

export function statOf(type: Shown, size: number, ino: number, mtimeMs: number, executable = false): Stat {
  const { uid, gid } = OWNER;
  return {
    mode: modeOf(type, executable),
    uid,
    gid,
    size,
    nlink: type === 'directory' ? 2 : 1,
    ino,
    blksize: 4096,
    blocks: Math.ceil(size / 512),
    atime: mtimeMs,
    mtime: mtimeMs,
    ctime: mtimeMs,
  };
}

/** The type a mode shows (what `modeOf` made it from: a special file is a regular one with no bits). */
export function typeOfMode(mode: number): Shown {
  const format = mode & 0o170000;
  if (format === S_IFREG) return (mode & 0o7777) === OTHER_MODE ? 'other' : 'file';
  return format === S_IFDIR ? 'directory' : format === S_IFLNK ? 'link' : 'other';
}
