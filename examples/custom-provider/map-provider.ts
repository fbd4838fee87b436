/**
 * A small storage provider kept in a Map, written only against the package's public API, as a
 * third-party backend would be. It supplies storage (bytes, versions, an atomic compare-and-swap,
 * directories, listing); locking, intents and every text and path rule come from `createFs`.
 */
import { posix } from 'node:path';
import {
  FsError,
  FsTargetKey,
  checkRename,
  checkRmdir,
  contentVersion,
  createFs,
  expectHolds,
  observe,
  type FileSystem,
  type FsCurrent,
  type FsDirEntry,
  type FsProviderInfo,
  type FsProvider,
  type FsSwapResult,
  type FsTarget,
  type RenameSide,
} from 'dsh-fs';

/** Files and directories by absolute path. Directories are explicit; `/` always exists. */
export class MapStore {
  readonly files = new Map<string, Uint8Array>();
  readonly dirs = new Set<string>(['/']);

  /** Stores a copy of `bytes` at `path`, creating parent directories (what another process would do). */
  put(path: string, bytes: Uint8Array): void {
    this.mkdirp(posix.dirname(path));
    this.files.set(path, new Uint8Array(bytes));
  }

  mkdirp(path: string): void {
    const missing: string[] = [];
    for (let p = path; !this.dirs.has(p); p = posix.dirname(p)) {
      // Checked before anything is added: a refused mkdir leaves no directory behind.
      if (this.files.has(p)) throw new FsError('FS_NOT_DIRECTORY', `"${p}" is a file, not a directory`);
      missing.push(p);
    }
    for (const p of missing) this.dirs.add(p);
  }

  /** Every path strictly below `dir`. */
  below(dir: string): string[] {
    const prefix = dir === '/' ? '/' : `${dir}/`;
    return [...this.dirs, ...this.files.keys()].filter((p) => p.startsWith(prefix) && p !== dir);
  }
}

export function createMapProvider(store: MapStore = new MapStore()): FsProvider {
  /** The file at `key`, or undefined; a directory is not a file to read or replace. */
  const current = (key: string, what: string): FsCurrent | undefined => {
    if (store.dirs.has(key)) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: is a directory`);
    const bytes = store.files.get(key);
    return bytes === undefined ? undefined : { bytes: new Uint8Array(bytes), version: contentVersion(bytes) };
  };

  const side = (key: string): RenameSide | undefined => {
    const bytes = store.files.get(key);
    if (bytes !== undefined) return { type: 'file', version: contentVersion(bytes) };
    if (store.dirs.has(key)) return { type: 'directory', empty: store.below(key).length === 0 };
    return undefined;
  };

  return {
    // Paths arrive canonical (absolute, normalised); with no symlinks, the path is the key.
    async resolve(path: string): Promise<FsTarget> {
      return { targetKey: FsTargetKey(path), displayPath: path };
    },

    // A directory's version is the seam's to mint (from its names): the provider gives a file's only.
    async stat({ targetKey }): Promise<FsProviderInfo | undefined> {
      const bytes = store.files.get(targetKey);
      if (bytes !== undefined) return { type: 'file', version: contentVersion(bytes), size: bytes.byteLength };
      if (store.dirs.has(targetKey)) return { type: 'directory' };
      return undefined;
    },

    async read(target, { maxBytes }): Promise<FsCurrent> {
      const what = `cannot read "${target.displayPath}"`;
      const file = current(target.targetKey, what);
      if (file === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (file.bytes.byteLength > maxBytes) {
        throw new FsError('FS_TOO_LARGE', `${what}: ${file.bytes.byteLength} bytes exceeds the ${maxBytes}-byte limit`);
      }
      return file;
    },

    // Compare and publish with no await in between: that is what makes it atomic here. A remote
    // store does the same in one conditional statement (UPDATE … WHERE version = $1).
    async swap(target, { expect, bytes }): Promise<FsSwapResult> {
      const key = target.targetKey;
      const before = current(key, `cannot write "${target.displayPath}"`);
      if (!expectHolds(expect, before)) return { ok: false, current: observe(before) };
      if (bytes === null) {
        store.files.delete(key);
        return { ok: true, existed: before !== undefined };
      }
      store.put(key, bytes);
      return { ok: true, existed: before !== undefined, version: contentVersion(bytes) };
    },

    async mkdir(target) {
      store.mkdirp(target.targetKey);
    },

    async rmdir(target, { recursive }) {
      const what = `cannot remove directory "${target.displayPath}"`;
      const dir = target.targetKey;
      if (store.files.has(dir)) throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
      if (!store.dirs.has(dir)) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      const below = store.below(dir);
      checkRmdir(what, below.length, recursive);
      for (const p of [...below, dir]) store.files.delete(p) || store.dirs.delete(p);
    },

    async rename(from, to, options) {
      const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
      const replacing = checkRename(what, side(from.targetKey), side(to.targetKey), options);
      if (replacing === 'none') store.mkdirp(posix.dirname(to.targetKey));
      store.files.delete(to.targetKey);
      store.dirs.delete(to.targetKey);
      // Move the name and, for a directory, everything below it.
      for (const p of [from.targetKey, ...store.below(from.targetKey)]) {
        const moved = to.targetKey + p.slice(from.targetKey.length);
        const bytes = store.files.get(p);
        if (bytes !== undefined) {
          store.files.delete(p);
          store.files.set(moved, bytes);
        } else {
          store.dirs.delete(p);
          store.dirs.add(moved);
        }
      }
    },

    async listDir(target): Promise<FsDirEntry[]> {
      const dir = target.targetKey;
      const what = `cannot list "${target.displayPath}"`;
      if (store.files.has(dir)) throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
      if (!store.dirs.has(dir)) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      const entries: FsDirEntry[] = [];
      const child = (path: string) => path !== dir && posix.dirname(path) === dir;
      for (const path of store.dirs) {
        if (child(path)) entries.push(entry(target, path, 'directory'));
      }
      for (const [path, bytes] of store.files) {
        if (child(path)) entries.push({ ...entry(target, path, 'file'), size: bytes.byteLength });
      }
      return entries; // in any order: the seam orders listings
    },
  };
}

function entry(parent: FsTarget, path: string, type: 'file' | 'directory'): FsDirEntry {
  const name = posix.basename(path);
  return { name, type, target: { targetKey: FsTargetKey(path), displayPath: posix.join(parent.displayPath, name) } };
}

/** The provider behind the seam: the `ctx.fs` an agent harness would use. */
export function createMapFs(store: MapStore = new MapStore()): { fs: FileSystem; provider: FsProvider; store: MapStore } {
  const provider = createMapProvider(store);
  return { fs: createFs(provider), provider, store };
}
