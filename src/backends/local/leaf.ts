import { closeSync, constants, fstatSync, openSync, readSync, readlinkSync, type BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import { FsError } from '../../seam/errors.js';
import { UNVERSIONED, type FsCurrent, type FsVersion } from '../../seam/types.js';
import { contentVersion } from '../../seam/version.js';
import { Moved, type DirAnchor, type SyncDirAnchor } from './anchor.js';
import { LEAF_READ_FLAGS, O_NOFOLLOW, O_PATH, type LocalContext } from './context.js';
import { errnoOf, isAbsent, notFound, notRegular, tooLarge } from './errors.js';
import { withHeldDir } from './held-dir.js';
import { hashBounded, readBounded } from './io.js';
import { pinnedRead, type PinnedIo } from './pinned.js';
import { sameTuple } from './version-cache.js';

const READ_ATTEMPTS = 3;
/** A file may grow this much beyond its fstat size while it is hashed before it counts as changing. */
const HASH_SLACK = 64 * 1024 * 1024;
/** Files up to this size are read by searches with synchronous calls (a short hold of the event loop). */
export const SYNC_READ_BYTES = 256 * 1024;

/** An open regular file and its stat at opening. */
export interface Leaf {
  readonly handle: FileHandle;
  readonly st: BigIntStats;
  readonly key: string;
}

/**
 * An open descriptor answering ENOENT: the file was replaced by a rename on a path-based
 * filesystem (libfuse 2 drops the replaced node's path; a disk keeps the inode). Moved, so the
 * name is looked up again.
 */
function replacedAsMoved(err: unknown, key: string): unknown {
  return errnoOf(err) === 'ENOENT' ? new Moved(key) : err;
}

/**
 * A search's read of a small file, with synchronous calls (ten thread-pool round trips per file
 * were most of grep's time) and the checks of openParent, openLeaf and readLeaf. Undefined: not
 * small, or it changed while read; the caller then takes the general path.
 */
export function readSmallSync(ctx: LocalContext, key: string, maxBytes: number, what: string): Uint8Array | undefined {
  try {
    return withHeldDir(ctx, posix.dirname(key), (parent) => readPinned(parent, key, maxBytes, what));
  } catch (err) {
    if (isAbsent(err)) throw notFound(what);
    throw err;
  }
}

/** node:fs and the flags for pinned reads; none where there is no O_PATH (nothing is read that way there). */
export const PINNED_IO: PinnedIo | undefined =
  O_PATH === undefined
    ? undefined
    : { openSync, fstatSync, readSync, closeSync, readlinkSync, O_PATH, O_NOFOLLOW, O_DIRECTORY: constants.O_DIRECTORY, readFlags: LEAF_READ_FLAGS };

/** The bytes of the entry of `key` in its verified parent, read through an O_PATH pin of its inode. */
function readPinned(parent: SyncDirAnchor, key: string, maxBytes: number, what: string): Uint8Array | undefined {
  if (PINNED_IO === undefined) return undefined;
  const found = pinnedRead(PINNED_IO, parent.child(posix.basename(key)), Math.min(maxBytes, SYNC_READ_BYTES));
  switch (found.kind) {
    case 'bytes':
      return new Uint8Array(found.bytes.buffer, found.bytes.byteOffset, found.bytes.byteLength);
    case 'absent':
      throw notFound(what);
    case 'link':
      throw new Moved(key);
    case 'other':
      throw notRegular(what, found.st);
    default:
      // Larger than a quick read, or changed while read: the general path reads it.
      return undefined;
  }
}

/**
 * Opens the regular file `name` in `anchor` without following a link and without blocking. A
 * pinned inode answering ENOENT was replaced meanwhile (see replacedAsMoved).
 */
export async function openLeaf(ctx: LocalContext, anchor: DirAnchor, name: string, key: string, what: string): Promise<Leaf | undefined> {
  const { fsp, mode } = ctx;
  const path = anchor.child(name);
  let st: BigIntStats;
  let pinned: FileHandle | undefined;
  try {
    if (mode === 'proc' && O_PATH !== undefined) {
      // Pin the inode without opening it for I/O (O_PATH opens no device and no FIFO), check
      // its type on the descriptor, then open that very inode through /proc: a special file
      // swapped in after a check by name is never opened.
      pinned = await fsp.open(path, O_PATH | O_NOFOLLOW);
      st = await pinned.stat({ bigint: true });
    } else st = await fsp.lstat(path, { bigint: true });
  } catch (err) {
    await pinned?.close().catch(() => undefined);
    if (pinned !== undefined) throw replacedAsMoved(err, key);
    if (isAbsent(err)) return undefined;
    throw err;
  }
  let handle: FileHandle;
  try {
    if (st.isSymbolicLink()) throw new Moved(key);
    // Never open anything but a regular file: opening a device or a FIFO can have effects.
    if (!st.isFile()) throw notRegular(what, st);
    handle = await fsp.open(pinned ? `/proc/self/fd/${pinned.fd}` : path, LEAF_READ_FLAGS & (pinned ? ~O_NOFOLLOW : ~0));
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT') {
      if (pinned !== undefined) throw new Moved(key);
      return undefined;
    }
    if (code === 'ELOOP') throw new Moved(key);
    if (code === 'ENXIO' || code === 'EISDIR') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
    throw err;
  } finally {
    await pinned?.close().catch(() => undefined);
  }
  return verifyLeaf(ctx, anchor, path, handle, key, what);
}

/** The opened file is still a regular file, and (without /proc) still the one the name names. */
async function verifyLeaf(ctx: LocalContext, anchor: DirAnchor, path: string, handle: FileHandle, key: string, what: string): Promise<Leaf> {
  try {
    const opened = await handle.stat({ bigint: true });
    if (!opened.isFile()) throw notRegular(what, opened);
    if (ctx.mode === 'inode') {
      // Without /proc the name was opened by full path: prove it still names this inode, in a
      // directory that is still where it was verified.
      const named = await ctx.fsp.lstat(path, { bigint: true });
      const dirNow = await ctx.fsp.realpath(anchor.path);
      if (dirNow !== anchor.path || named.dev !== opened.dev || named.ino !== opened.ino) throw new Moved(key);
    }
    return { handle, st: opened, key };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw replacedAsMoved(err, key);
  }
}

/** Reads a whole leaf, retrying while it changes underneath; the version is of exactly these bytes. */
export async function readLeaf(leaf: Leaf, maxBytes: number, what: string, versioned = true): Promise<FsCurrent & { st: BigIntStats }> {
  return readLeafOnce(leaf, maxBytes, what, versioned).catch((err: unknown) => {
    throw replacedAsMoved(err, leaf.key);
  });
}

async function readLeafOnce(leaf: Leaf, maxBytes: number, what: string, versioned: boolean): Promise<FsCurrent & { st: BigIntStats }> {
  let before = leaf.st;
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    if (attempt > 0) before = await leaf.handle.stat({ bigint: true });
    if (before.size > BigInt(maxBytes)) throw tooLarge(what, before.size, maxBytes);
    const bytes = await readBounded(leaf.handle, maxBytes, Number(before.size));
    if (bytes === undefined) throw tooLarge(what, undefined, maxBytes);
    const after = await leaf.handle.stat({ bigint: true });
    if (sameTuple(before, after)) return { bytes, version: versioned ? contentVersion(bytes) : UNVERSIONED, st: after };
  }
  throw new FsError('FS_IO_ERROR', `${what}: the file kept changing while it was read`);
}

export function hashLeaf(leaf: Leaf, what: string): Promise<{ version: FsVersion; st: BigIntStats }> {
  return hashLeafOnce(leaf, what).catch((err: unknown) => {
    throw replacedAsMoved(err, leaf.key);
  });
}

async function hashLeafOnce(leaf: Leaf, what: string): Promise<{ version: FsVersion; st: BigIntStats }> {
  let before = leaf.st;
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    if (attempt > 0) before = await leaf.handle.stat({ bigint: true });
    const hashed = await hashBounded(leaf.handle, Number(before.size) + HASH_SLACK);
    const after = await leaf.handle.stat({ bigint: true });
    if (hashed !== undefined && sameTuple(before, after)) return { version: hashed.version, st: after };
  }
  throw new FsError('FS_IO_ERROR', `${what}: the file kept changing while it was read`);
}

/** The version of an open leaf: from the stat-keyed cache, else hashed without holding the file in memory. */
export async function leafVersion(ctx: LocalContext, leaf: Leaf, key: string, what: string): Promise<FsVersion> {
  const cached = ctx.cache.lookup(key, leaf.st);
  if (cached !== undefined) return cached;
  const { version, st } = await hashLeaf(leaf, what);
  ctx.cache.record(key, st, version);
  return version;
}

