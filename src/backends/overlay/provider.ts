import { posix } from 'node:path';
import {
  FsError,
  FsTargetKey,
  FsVersion,
  KeyedMutex,
  checkWriteIntent,
  compareNames,
  contentVersion,
  isFsError,
  isWithin,
  throwIfAborted,
  type FileSystem,
  type FsCurrent,
  type FsDirEntry,
  type FsInfo,
  type FsOpOptions,
  type FsProvider,
  type FsTarget,
} from '../../seam/index.js';
import type { UpperEntry, UpperFile, UpperState } from './state.js';

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
}

/**
 * The overlay as a storage provider. Target keys are the lower's (canonical absolute paths), so
 * aliases resolve as the lower resolves them; text semantics come from the seam.
 */
export function createOverlayProvider(core: OverlayCore): FsProvider {
  const { lower, state, rootKey, lock } = core;

  /** The view's current file, and what the lower held when it had to be read. */
  async function viewCurrent(target: FsTarget, what: string, signal: AbortSignal | undefined) {
    const key = target.targetKey;
    const entry = state.entries.get(key);
    if (entry?.kind === 'file') return { current: { bytes: entry.bytes, version: entry.version } as FsCurrent, entry };
    if (state.dirs.has(key)) throw notRegular(what);
    if (entry) return { current: undefined, entry };
    const lowerCurrent = await lowerFile(lower, target, what, signal);
    if (lowerCurrent === undefined && hasUpperDescendant(state, key)) throw notRegular(what);
    return { current: lowerCurrent, entry: undefined, lowerCurrent, lowerRead: true as const };
  }

  /** Ancestors (nearest first) that the view lacks and a new file at `key` needs. */
  async function dirsToCreate(key: string, what: string, signal: AbortSignal | undefined): Promise<string[]> {
    const out: string[] = [];
    for (let dir = posix.dirname(key); isWithin(rootKey, dir); dir = posix.dirname(dir)) {
      const entry = state.entries.get(dir);
      if (entry?.kind === 'file') throw notDirectory(what);
      if (state.dirs.has(dir)) break;
      if (!entry) {
        const info = await lowerStat(lower, pathTarget(dir), signal);
        if (info?.type === 'directory') break;
        if (info) throw notDirectory(what);
        if (hasUpperDescendant(state, dir)) break;
      }
      out.push(dir);
      if (dir === '/') break;
    }
    return out;
  }

  async function mergedDirVersion(target: FsTarget, signal: AbortSignal | undefined): Promise<FsVersion> {
    const names = (await listMerged(target, signal)).map((e) => e.name);
    // The memory provider's formula, so an unchanged directory keeps its version across layers.
    return FsVersion(`dir:${contentVersion(Buffer.from(names.join('\0')))}`);
  }

  async function listMerged(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    const key = target.targetKey;
    const what = `cannot list "${target.displayPath}"`;
    const own = state.entries.get(key);
    if (own?.kind === 'file') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
    const madeHere = state.dirs.has(key);
    if (own && !madeHere) throw new FsError('FS_NOT_FOUND', `${what}: not found`);

    let lowerEntries: FsDirEntry[] = [];
    if (!own) {
      try {
        lowerEntries = await lower.listDir(target, { signal });
      } catch (err) {
        const absent = isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY');
        if (!(absent && (madeHere || hasUpperDescendant(state, key)))) throw err;
      }
    }

    const entries = state.entries;
    const out: FsDirEntry[] = [];
    const seen = new Set<string>();
    const entryFor = (name: string, childKey: string, file: UpperFile | undefined): FsDirEntry => ({
      name,
      type: file ? 'file' : 'directory',
      target: { targetKey: FsTargetKey(childKey), displayPath: posix.join(target.displayPath, name) },
      ...(file ? { size: file.bytes.byteLength, mtimeMs: file.mtimeMs } : {}),
    });

    for (const e of lowerEntries) {
      seen.add(e.name);
      const childKey = posix.join(key, e.name);
      const child = entries.get(childKey);
      if (child?.kind === 'file') out.push(entryFor(e.name, childKey, child));
      else if (state.dirs.has(childKey)) out.push(entryFor(e.name, childKey, undefined));
      else if (child) continue; // whited out
      else if (e.target.targetKey !== childKey) {
        // A lower symlink: its type is whatever the view holds at the link's target.
        const linked = entries.get(e.target.targetKey);
        const display = { ...e.target, displayPath: posix.join(target.displayPath, e.name) };
        if (linked?.kind === 'file') {
          out.push({ name: e.name, type: 'file', target: display, size: linked.bytes.byteLength, mtimeMs: linked.mtimeMs });
        }
        else if (state.dirs.has(e.target.targetKey)) out.push({ name: e.name, type: 'directory', target: display });
        else if (linked) out.push({ name: e.name, type: 'other', target: display });
        else out.push({ ...e, target: display });
      } else out.push({ ...e, target: { ...e.target, displayPath: posix.join(target.displayPath, e.name) } });
    }

    const prefix = key === '/' ? '/' : `${key}/`;
    for (const [childKey, child] of entries) {
      if (child.kind !== 'file' || !isChild(prefix, childKey)) continue;
      const name = childKey.slice(prefix.length);
      if (!seen.has(name)) {
        seen.add(name);
        out.push(entryFor(name, childKey, child));
      }
    }
    for (const dir of state.dirs) {
      if (!isChild(prefix, dir)) continue;
      const name = dir.slice(prefix.length);
      if (!seen.has(name)) {
        seen.add(name);
        out.push(entryFor(name, dir, undefined));
      }
    }
    throwIfAborted(signal, what);
    return out.sort((a, b) => compareNames(a.name, b.name));
  }

  const provider: FsProvider = {
    ...(lower.root === undefined ? {} : { root: lower.root }),
    cwd: lower.cwd,

    resolve: (path, { signal }) => lower.resolve(path, { signal }),

    contains: (parent, child) => lower.contains(parent, child),

    async stat(target, { signal }): Promise<FsInfo | undefined> {
      const key = target.targetKey;
      const entry = state.entries.get(key);
      if (entry?.kind === 'file') return { type: 'file', version: entry.version, size: entry.bytes.byteLength, mtimeMs: entry.mtimeMs };
      if (state.dirs.has(key)) return { type: 'directory', version: await mergedDirVersion(target, signal) };
      if (entry) return undefined;
      const info = await lowerStat(lower, target, signal);
      if (info?.type === 'directory') {
        return hasUpperChild(state, key) ? { type: 'directory', version: await mergedDirVersion(target, signal) } : info;
      }
      if (info === undefined && hasUpperDescendant(state, key)) {
        return { type: 'directory', version: await mergedDirVersion(target, signal) };
      }
      return info;
    },

    async read(target, { maxBytes, signal }): Promise<FsCurrent> {
      const key = target.targetKey;
      const what = `cannot read "${target.displayPath}"`;
      const entry = state.entries.get(key);
      if (entry?.kind === 'file') {
        if (entry.bytes.byteLength > maxBytes) {
          throw new FsError('FS_TOO_LARGE', `${what}: ${entry.bytes.byteLength} bytes exceeds the ${maxBytes}-byte limit`);
        }
        // A copy: callers own what they read, and must not reach into the upper layer.
        return { bytes: new Uint8Array(entry.bytes), version: entry.version };
      }
      if (state.dirs.has(key)) throw notRegular(what);
      if (entry) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      try {
        return await lower.readBytes(target, { maxBytes, signal });
      } catch (err) {
        if (isFsError(err, 'FS_NOT_FOUND') && hasUpperDescendant(state, key)) throw notRegular(what);
        throw err;
      }
    },

    write(target, { intent, produce, signal }) {
      const key = target.targetKey;
      const what = `cannot write "${target.displayPath}"`;
      const attempt = async (creating: boolean) => {
        const view = await viewCurrent(target, what, signal);
        if (view.current === undefined && !creating) return undefined;
        checkWriteIntent(intent, view.current, what);
        // produce before the parents are checked, as a plain provider would: an edit of a missing
        // file is FS_NOT_FOUND even when a parent is a file.
        const bytes = produce(view.current);
        const addDirs = view.current === undefined ? await dirsToCreate(key, what, signal) : [];
        throwIfAborted(signal, what);
        const created = view.current === undefined;
        // Bytes the lower already holds need no upper copy: the path shows the lower, at its version.
        const lowerNow = view.lowerRead ? view.lowerCurrent : await lowerIfSame(lower, target, bytes, signal);
        if (lowerNow !== undefined && bytesEqual(lowerNow.bytes, bytes)) {
          if (view.entry || addDirs.length > 0) await state.apply({ entries: [[key, undefined]], addDirs });
          return { version: lowerNow.version, created };
        }
        const version = contentVersion(bytes);
        const base = view.entry ? view.entry.base : view.lowerCurrent?.version;
        await state.apply({ entries: [[key, { kind: 'file', bytes, version, mtimeMs: Date.now(), base }]], addDirs });
        return { version, created };
      };
      return lock.run(key, async () => {
        // Creating a file changes the tree (new directories, a name that a sibling create may need
        // as a directory), so creates also hold the tree lock; rewrites of a file do not.
        return (await attempt(false)) ?? lock.run(TREE_LOCK, async () => (await attempt(true))!);
      });
    },

    listDir: (target, { signal }) => listMerged(target, signal),

    remove(target, { intent, signal }) {
      const key = target.targetKey;
      const what = `cannot remove "${target.displayPath}"`;
      return lock.run(key, async () => {
        const view = await viewCurrent(target, what, signal);
        if (view.current === undefined && intent === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
        checkWriteIntent(intent, view.current, what);
        throwIfAborted(signal, what);
        let next: UpperEntry | undefined;
        if (view.entry) {
          // Only hide the lower when it has something there (no whiteouts for nothing).
          const below = await lowerStat(lower, target, signal);
          next = below === undefined ? undefined : { kind: 'whiteout', base: view.entry.base };
        } else {
          next = { kind: 'whiteout', base: view.lowerCurrent?.version };
        }
        await state.apply({ entries: [[key, next]] });
      });
    },
  };
  return provider;
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
export async function lowerStat(lower: FileSystem, target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
  try {
    return await lower.stat(target, { signal });
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
): Promise<FsCurrent | undefined> {
  if (bytes === undefined) return undefined;
  const info = await lowerStat(lower, target, signal);
  if (info?.type !== 'file' || (info.size !== undefined && info.size !== bytes.byteLength)) return undefined;
  try {
    const { bytes: now, version } = await lower.readBytes(target, { maxBytes: WHOLE_FILE, signal });
    return { bytes: now, version };
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

function isChild(prefix: string, key: string): boolean {
  return key.length > prefix.length && key.startsWith(prefix) && !key.includes('/', prefix.length);
}

function hasUpperChild(state: UpperState, key: string): boolean {
  const prefix = key === '/' ? '/' : `${key}/`;
  for (const k of state.entries.keys()) if (isChild(prefix, k)) return true;
  for (const d of state.dirs) if (isChild(prefix, d)) return true;
  return false;
}

/** True when the overlay holds a file or made a directory strictly below `key`: the view has a directory there. */
export function hasUpperDescendant(state: UpperState, key: string): boolean {
  const prefix = key === '/' ? '/' : `${key}/`;
  for (const [k, e] of state.entries) if (e.kind === 'file' && k.length > prefix.length && k.startsWith(prefix)) return true;
  for (const d of state.dirs) if (d.length > prefix.length && d.startsWith(prefix)) return true;
  return false;
}

function notRegular(what: string): FsError {
  return new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
}

function notDirectory(what: string): FsError {
  return new FsError('FS_NOT_DIRECTORY', `${what}: a path segment is not a directory`);
}
