/**
 * A small storage provider kept in a Map, written only against the package's public API, as a
 * third-party backend would be. It supplies storage (bytes, versions, a per-target lock,
 * listing); every text and path rule comes from `createFs`.
 */
import { posix } from 'node:path';
import {
  FsError,
  FsTargetKey,
  FsVersion,
  KeyedMutex,
  checkWriteIntent,
  compareNames,
  contentVersion,
  createFs,
  type FileSystem,
  type FsCurrent,
  type FsDirEntry,
  type FsInfo,
  type FsProvider,
  type FsTarget,
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
    for (let p = path; !this.dirs.has(p); p = posix.dirname(p)) {
      if (this.files.has(p)) throw new FsError('FS_NOT_DIRECTORY', `"${p}" is a file, not a directory`);
      this.dirs.add(p);
    }
  }
}

export function createMapProvider(store: MapStore = new MapStore()): FsProvider {
  // One lock per target: the intent check and the publish happen inside it.
  const lock = new KeyedMutex();

  const current = (key: string, what: string): FsCurrent | undefined => {
    if (store.dirs.has(key)) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: is a directory`);
    const bytes = store.files.get(key);
    return bytes === undefined ? undefined : { bytes: new Uint8Array(bytes), version: contentVersion(bytes) };
  };

  return {
    // Paths arrive canonical (absolute, normalised); with no symlinks, the path is the key.
    async resolve(path: string): Promise<FsTarget> {
      return { targetKey: FsTargetKey(path), displayPath: path };
    },

    async stat({ targetKey }): Promise<FsInfo | undefined> {
      const bytes = store.files.get(targetKey);
      if (bytes !== undefined) return { type: 'file', version: contentVersion(bytes), size: bytes.byteLength };
      if (store.dirs.has(targetKey)) return { type: 'directory', version: FsVersion('dir') };
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

    write(target, { intent, produce }) {
      const key = target.targetKey;
      return lock.run(key, () => {
        const what = `cannot write "${target.displayPath}"`;
        const before = current(key, what);
        checkWriteIntent(intent, before, what);
        const bytes = produce(before);
        store.put(key, bytes);
        return { version: contentVersion(bytes), created: before === undefined };
      });
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
      return entries.sort((a, b) => compareNames(a.name, b.name));
    },

    remove(target, { intent }) {
      const key = target.targetKey;
      return lock.run(key, () => {
        const what = `cannot remove "${target.displayPath}"`;
        const before = current(key, what);
        if (before === undefined && intent === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
        checkWriteIntent(intent, before, what);
        store.files.delete(key);
      });
    },
  };
}

function entry(parent: FsTarget, path: string, type: 'file' | 'directory'): FsDirEntry {
  const name = posix.basename(path);
  return { name, type, target: { targetKey: FsTargetKey(path), displayPath: posix.join(parent.displayPath, name) } };
}

/** The provider behind the seam: the `ctx.fs` an agent harness would use. */
export function createMapFs(store: MapStore = new MapStore()): { fs: FileSystem; store: MapStore } {
  return { fs: createFs(createMapProvider(store)), store };
}
