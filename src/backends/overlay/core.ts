import { posix } from 'node:path';
import { FsError, FsTargetKey, KeyedMutex, isFsError, type FileSystem, type FsCurrent, type FsInfo, type FsTarget } from '../../seam/index.js';
import type { UpperState } from './state.js';

// What the overlay's modules share: its storage and the questions they ask of the upper and the lower.
/** Held (after the target's own lock) by anything that adds files or directories to the tree. */
export const TREE_LOCK = '';

/** Reads of the lower that must see a whole file (copy-up, comparison). */
export const WHOLE_FILE = Number.MAX_SAFE_INTEGER;

/** The overlay's storage: an upper state over a lower filesystem, plus the per-target lock. */
export interface OverlayCore {
  readonly lower: FileSystem;
  readonly state: UpperState;
  /** The lower's target key for its root (or `/`): the overlay never makes directories above it. */
  readonly rootKey: string;
  readonly lock: KeyedMutex;
  /** The real path of the state directory that keeps the upper, if any: it can finish a journaled commit. */
  readonly owner?: string;
}

/** The lower's file at `target`, or undefined when there is none. */
export async function lowerFile(
  lower: FileSystem,
  target: FsTarget,
  what: string,
  signal: AbortSignal | undefined,
): Promise<FsCurrent | undefined> {
  try {
    const { bytes, version } = await lower.readBytes(target, { maxBytes: WHOLE_FILE, signal });
    return { bytes, version };
  } catch (err) {
    if (isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY')) return undefined;
    if (isFsError(err, 'FS_NOT_REGULAR_FILE')) throw notRegular(what);
    throw err;
  }
}

/** The lower's stat, with "a path segment is a file" read as absent (the overlay may have hidden that file). */
export async function lowerStat(lower: FileSystem, target: FsTarget, signal: AbortSignal | undefined, versioned = true): Promise<FsInfo | undefined> {
  try {
    return await lower.stat(target, { signal, ...(versioned ? {} : { versioned }) });
  } catch (err) {
    if (isFsError(err, 'FS_NOT_DIRECTORY') || isFsError(err, 'FS_NOT_FOUND')) return undefined;
    throw err;
  }
}

/** The lower's file when it may equal `bytes` (same size), else undefined; never reads a file of another size. */
export async function lowerIfSame(
  lower: FileSystem,
  target: FsTarget,
  bytes: Uint8Array | undefined,
  signal: AbortSignal | undefined,
): Promise<(FsCurrent & { readonly executable: boolean }) | undefined> {
  if (bytes === undefined) return undefined;
  const info = await lowerStat(lower, target, signal);
  if (info?.type !== 'file' || (info.size !== undefined && info.size !== bytes.byteLength)) return undefined;
  try {
    const { bytes: now, version } = await lower.readBytes(target, { maxBytes: WHOLE_FILE, signal });
    return { bytes: now, version, executable: info.executable === true };
  } catch (err) {
    if (err instanceof FsError && err.code !== 'FS_ABORTED') return undefined;
    throw err;
  }
}

/** A target for a canonical key the overlay derived itself (an ancestor or a child of a known key). */
export function pathTarget(key: string): FsTarget {
  return { targetKey: FsTargetKey(key), displayPath: key };
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0;
}

/** True when `key` or one of its ancestors is a lower directory the overlay removed: the lower does not show there. */
export function isHidden(state: UpperState, key: string): boolean {
  if (state.opaque.size === 0) return false;
  for (let k = key; ; k = posix.dirname(k)) {
    if (state.opaque.has(k)) return true;
    if (k === '/') return false;
  }
}

export function isChild(prefix: string, key: string): boolean {
  return key.length > prefix.length && key.startsWith(prefix) && !key.includes('/', prefix.length);
}

/** True when the overlay changed something directly in `key` (an entry, a made or removed directory). */
export function hasUpperChild(state: UpperState, key: string): boolean {
  return state.hasChild(key);
}

/** True when the overlay holds a file or made a directory strictly below `key`: the view has a directory there. */
export function hasUpperDescendant(state: UpperState, key: string): boolean {
  return state.hasDescendant(key);
}

export function notRegular(what: string): FsError {
  return new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
}

export function notDirectory(what: string): FsError {
  return new FsError('FS_NOT_DIRECTORY', `${what}: a path segment is not a directory`);
}
