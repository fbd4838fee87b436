import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { FsError, type FileSystem } from '../seam/index.js';
import { AttrCache } from './cache.js';
import { DEFAULT_WHOLE_FILE_BYTES, OpenFiles } from './handles.js';
import { loadFuse, type FuseInstance, type LoadOptions } from './load.js';
import { createOps } from './ops.js';

export { ERRNO_OF_CODE } from './errno.js';
export { type FuseLoader, type LoadOptions } from './load.js';

export interface MountOptions {
  /** Every mutation is refused with EROFS. */
  readonly readOnly?: boolean;
  /** The contract directory shown at the mountpoint (default: the filesystem's root, else `/`). */
  readonly base?: string;
  /**
   * The most bytes held in memory for one open file (default 256 MiB): a file held whole, or what
   * programs wrote to a large file since it was last published. A write beyond it is EFBIG.
   */
  readonly maxFileBytes?: number;
  /**
   * Files up to this size (default 8 MiB) are held whole while open. A larger one is read by
   * range, and what programs write to it is kept as ranges over it, published as a stream.
   */
  readonly wholeFileBytes?: number;
  /**
   * How long (seconds) the kernel may answer lookups and stats from its cache (default 0). Above 0,
   * a change made through the contract by someone else (an agent, another process) may go unseen
   * by programs on the mount for that long; see docs/mount.md.
   */
  readonly cacheSeconds?: number;
  /** Told of what the mount did on its own (a stale mount cleared) and of unexpected failures. */
  readonly onWarning?: (message: string) => void;
  /** How FUSE is found (tests simulate a missing piece with `loader`). */
  readonly load?: LoadOptions;
}

export interface Mount {
  readonly mountpoint: string;
  /** What the mount did on its own before serving (e.g. cleared a stale mount), for the caller to show. */
  readonly notes: readonly string[];
  /** Publishes what open files still hold, then unmounts. Safe to call twice. */
  unmount(): Promise<void>;
}

/**
 * The options given to fuse-native for a mount with `options` (exported so a comparison mount in
 * the bench runs on the same kernel settings).
 */
export function kernelOptions(options: MountOptions, name = 'dsh-fs'): Record<string, unknown> {
  const cache = options.cacheSeconds ?? 0;
  if (typeof cache !== 'number' || !(cache >= 0 && cache <= 3600)) throw new FsError('FS_INVALID_ARGUMENT', `cacheSeconds must be between 0 and 3600, got ${cache}`);
  return {
    // fuse-native passes only the options it knows, and drops a 0: the rest ride on fsname, which
    // libfuse splits at commas. atomic_o_trunc: O_TRUNC reaches open (the buffer), not a truncate
    // published before it. Names and attributes are cached by the kernel for `cache` seconds only.
    fsname: `${name},use_ino,big_writes,atomic_o_trunc,attr_timeout=${cache},entry_timeout=${cache},negative_timeout=0${options.readOnly === true ? ',ro' : ''}`,
    defaultPermissions: true,
    // An answer that takes long (a lock held elsewhere) is still the answer: no ETIMEDOUT.
    timeout: false,
  };
}

const DEFAULT_MAX_FILE_BYTES = 256 * 1024 * 1024;

function byteOption(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new FsError('FS_INVALID_ARGUMENT', `${name} must be a non-negative integer, got ${String(value)}`);
  return value;
}

/**
 * Serves `fs` at `mountpoint` through FUSE until `unmount()`. Every failure is an FsError:
 * FS_UNSUPPORTED names a missing piece of FUSE and how to install it.
 */
export async function mountFs(fs: FileSystem, mountpoint: string, options: MountOptions = {}): Promise<Mount> {
  const kernel = kernelOptions(options);
  const Fuse = await loadFuse(options.load);
  const where = resolve(mountpoint);
  const notes: string[] = [];
  const warn = (message: string) => {
    notes.push(message);
    options.onWarning?.(message);
  };
  await checkMountpoint(where, warn);

  const base = options.base ?? fs.root ?? '/';
  const baseInfo = await fs.stat(await fs.resolve(base));
  if (baseInfo?.type !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `cannot mount "${base}": not a directory`);

  const files = new OpenFiles(fs, byteOption(options.maxFileBytes, DEFAULT_MAX_FILE_BYTES, 'maxFileBytes'), byteOption(options.wholeFileBytes, DEFAULT_WHOLE_FILE_BYTES, 'wholeFileBytes'));
  const ops = createOps({
    fs,
    base,
    readOnly: options.readOnly === true,
    files,
    cache: new AttrCache((options.cacheSeconds ?? 0) * 1000),
    onUnexpected: (op, err) => options.onWarning?.(`${op}: ${err instanceof Error ? err.message : String(err)}`),
  });
  const fuse = new Fuse(where, ops, kernel);
  await new Promise<void>((done, failed) =>
    fuse.mount((err) => (err ? failed(new FsError('FS_IO_ERROR', `cannot mount at "${where}": ${err.message}`, { cause: err })) : done())),
  );

  let unmounting: Promise<void> | undefined;
  return {
    mountpoint: where,
    notes,
    unmount: () => (unmounting ??= unmount(fuse, files, where)),
  };
}

async function unmount(fuse: FuseInstance, files: OpenFiles, where: string): Promise<void> {
  // Files still open (a program killed mid-write) are published before the mount goes away.
  const lost: string[] = [];
  for (const node of files.dirtyNodes()) {
    await files.publish(node).catch((err: unknown) => lost.push(`${node.target.displayPath} (${err instanceof Error ? err.message : String(err)})`));
  }
  // What programs closed without fsync reaches the disk now.
  const unsynced = await files.durable().then(() => undefined, (err: unknown) => err);
  await new Promise<void>((done, failed) =>
    fuse.unmount((err) => (err ? failed(new FsError('FS_IO_ERROR', `cannot unmount "${where}": ${err.message}`, { cause: err })) : done())),
  );
  if (unsynced !== undefined) throw new FsError('FS_IO_ERROR', `unmounted "${where}", but what programs wrote could not be flushed to disk`, { cause: unsynced });
  if (lost.length > 0) throw new FsError('FS_CONFLICT', `unmounted "${where}", but ${lost.length} open file(s) could not be published: ${lost.join('; ')}`);
}

/** The mountpoint must be a directory; one left by a killed server (ENOTCONN) is cleared first. */
async function checkMountpoint(where: string, warn: (message: string) => void): Promise<void> {
  let info;
  try {
    info = await stat(where);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTCONN') {
      await lazyUnmount(where);
      warn(`"${where}" was a stale mount (its server had died): unmounted it with fusermount -uz`);
      info = await stat(where).catch(() => undefined);
    } else if (code === 'ENOENT') {
      throw new FsError('FS_NOT_FOUND', `cannot mount at "${where}": no such directory`);
    } else {
      throw new FsError('FS_IO_ERROR', `cannot mount at "${where}": ${(err as Error).message}`, { cause: err });
    }
  }
  if (info === undefined || !info.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `cannot mount at "${where}": not a directory`);
}

/** fusermount -uz, spawned (a synchronous child would stall the event loop that serves mounts). */
export function lazyUnmount(where: string): Promise<void> {
  return new Promise((done, failed) => {
    const child = spawn('fusermount', ['-uz', where], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (err) => failed(new FsError('FS_IO_ERROR', `fusermount -uz "${where}": ${err.message}`, { cause: err })));
    child.on('close', (code) => (code === 0 ? done() : failed(new FsError('FS_IO_ERROR', `fusermount -uz "${where}" failed: ${stderr.trim() || `exit ${code}`}`))));
  });
}
