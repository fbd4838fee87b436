import { closeSync, constants, openSync, readlinkSync, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import { FsError, quietly } from '../../seam/errors.js';
import { isWithin } from '../../seam/path.js';

/**
 * How an opened directory is pinned and checked:
 * - `proc` (Linux): the descriptor's real path is read back from `/proc/self/fd/N`, and every
 *   child operation goes through `/proc/self/fd/N/<name>`, so it acts on the verified directory
 *   object even if the path is swapped for a symlink a moment later (like openat/renameat).
 * - `inode` (elsewhere): the descriptor's device and inode are compared with those of the
 *   realpath of the directory; child operations then use the full path, which leaves a window.
 */
export type AnchorMode = 'proc' | 'inode';

const O_NOFOLLOW = constants.O_NOFOLLOW;
const O_DIRECTORY = constants.O_DIRECTORY;

export const hardenedOpenSupported = (): boolean => typeof O_NOFOLLOW === 'number' && typeof O_DIRECTORY === 'number';

let procProbe: boolean | undefined;

/** Whether `/proc/self/fd` reports real paths of descriptors here (checked once per process). */
export function procAnchoringAvailable(): boolean {
  if (procProbe !== undefined) return procProbe;
  procProbe = false;
  if (process.platform !== 'linux' || !hardenedOpenSupported()) return procProbe;
  let fd: number | undefined;
  try {
    fd = openSync('/', constants.O_RDONLY | O_DIRECTORY);
    procProbe = readlinkSync(`/proc/self/fd/${fd}`) === '/';
  } catch {
    procProbe = false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return procProbe;
}

/** Raised inside the provider when the path of a target no longer leads where it did at resolve time. */
export class Moved extends Error {
  constructor(readonly key: string) {
    super(`"${key}" changed while in use`);
  }
}

/** A verified, open directory inside the root. */
export class DirAnchor {
  constructor(
    readonly handle: FileHandle,
    /** The directory's real path when it was verified. */
    readonly path: string,
    readonly mode: AnchorMode,
  ) {}

  /** The path through which to operate on the entry `name` of this directory. */
  child(name: string): string {
    return this.mode === 'proc' ? `/proc/self/fd/${this.handle.fd}/${name}` : posix.join(this.path, name);
  }

  /** The path through which to operate on the directory itself (readdir). */
  get self(): string {
    return this.mode === 'proc' ? `/proc/self/fd/${this.handle.fd}` : this.path;
  }

  close(): Promise<void> {
    return this.handle.close().catch(() => undefined);
  }
}

/** The `fs.promises` functions openDir uses (replaceable for fault injection in tests). */
export type AnchorIo = Pick<typeof fsp, 'open' | 'readlink' | 'realpath' | 'stat'>;

/**
 * Opens the directory at the real path `dir` and proves that the descriptor is that directory.
 * A descriptor that landed outside `root` (an ancestor was swapped for a symlink) is refused with
 * FS_OUTSIDE_ROOT before anything is done through it; one that landed elsewhere inside the root
 * raises Moved so the caller can resolve again. Node errors (ENOENT, ENOTDIR, EACCES) propagate.
 */
export async function openDir(dir: string, root: string, mode: AnchorMode, io: AnchorIo = fsp): Promise<DirAnchor> {
  if (!isWithin(root, dir)) throw new FsError('FS_OUTSIDE_ROOT', `"${dir}" is outside the root "${root}"`);
  const handle = await io.open(dir, constants.O_RDONLY | O_DIRECTORY);
  try {
    checkLanded(mode === 'proc' ? await io.readlink(`/proc/self/fd/${handle.fd}`) : await inodeCheck(handle, dir, io), dir, root);
    return new DirAnchor(handle, dir, mode);
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/** Where an opened directory descriptor really is, against where it was meant to be. */
function checkLanded(actual: string, dir: string, root: string): void {
  if (actual === dir) return;
  if (actual.endsWith(' (deleted)') && actual.slice(0, -' (deleted)'.length) === dir) {
    throw Object.assign(new Error(`directory "${dir}" was removed`), { code: 'ENOENT' });
  }
  if (!isWithin(root, actual)) {
    throw new FsError('FS_OUTSIDE_ROOT', `"${dir}" now leads to "${actual}", which is outside the root "${root}"`);
  }
  throw new Moved(dir);
}

/** A directory pinned as by `openDir` in `proc` mode, by a plain descriptor. */
export interface SyncDirAnchor {
  readonly fd: number;
  /** `/proc/self/fd/N`: the directory itself. */
  readonly self: string;
  /** `/proc/self/fd/N/<name>`: an entry of the directory. */
  child(name: string): string;
  close(): void;
}

/**
 * `openDir` in `proc` mode with synchronous calls: the same checks, without three thread-pool
 * round trips per directory, for walks that open thousands of directories one after another.
 */
export function openDirSync(dir: string, root: string): SyncDirAnchor {
  if (!isWithin(root, dir)) throw new FsError('FS_OUTSIDE_ROOT', `"${dir}" is outside the root "${root}"`);
  // Quiet: a directory not there yet (a name about to be created in it) is a common answer.
  const fd = quietly(() => openSync(dir, constants.O_RDONLY | O_DIRECTORY));
  const close = () => {
    try {
      closeSync(fd);
    } catch {
      // Already closed: nothing to release.
    }
  };
  try {
    const self = `/proc/self/fd/${fd}`;
    checkLanded(readlinkSync(self), dir, root);
    return { fd, self, child: (name) => `${self}/${name}`, close };
  } catch (err) {
    close();
    throw err;
  }
}

/** Portable check: the descriptor and the realpath of `dir` must be the same inode. */
async function inodeCheck(handle: FileHandle, dir: string, io: AnchorIo): Promise<string> {
  const opened = await handle.stat({ bigint: true });
  const real = await io.realpath(dir);
  const named = await io.stat(real, { bigint: true });
  if (named.dev !== opened.dev || named.ino !== opened.ino) {
    // The path now names another directory: where the descriptor really is cannot be known here.
    return real === dir ? `${dir}\0` : real;
  }
  return real;
}
