import { posix } from 'node:path';
import { FsError, isFsError, throwIfAborted, toFsError, type FileSystem, type FsDirEntry, type FsEntryType, type FsTarget } from '../seam/index.js';
import { DEFAULT_MAX_ENTRIES, MAX_RECORDED_SKIPS, type SearchSkip } from './search.js';

/*
 * An fs adapter for callers who run fast-glob themselves over a FileSystem. Search no longer uses
 * it (glob walks with `fs.walk` and matches with picomatch); it is kept for those callers.
 */

/** The six methods fast-glob takes through its `fs` option, every one of them from the contract. */
export interface GlobFsAdapter {
  lstat(path: string, callback: (error: Error | null, stats?: SeamStats) => void): void;
  stat(path: string, callback: (error: Error | null, stats?: SeamStats) => void): void;
  lstatSync(path: string): never;
  statSync(path: string): never;
  readdir(path: string, options: unknown, callback?: (error: Error | null, entries?: unknown[]) => void): void;
  readdirSync(path: string, options?: unknown): never;
}

export interface EntryInfo {
  readonly name: string;
  readonly type: FsEntryType;
  readonly target: FsTarget;
  readonly size?: number;
  readonly mtimeMs?: number;
}

interface DirNode {
  readonly target: FsTarget;
  readonly parent: DirNode | undefined;
}

/** A `fs.Stats` look-alike built from contract data (no symlinks: the contract follows them). */
export class SeamStats {
  readonly size: number;
  readonly mtimeMs: number;
  readonly mtime: Date;
  constructor(readonly type: FsEntryType, size: number | undefined, mtimeMs: number | undefined) {
    this.size = size ?? 0;
    this.mtimeMs = mtimeMs ?? 0;
    this.mtime = new Date(this.mtimeMs);
  }
  isFile(): boolean {
    return this.type === 'file';
  }
  isDirectory(): boolean {
    return this.type === 'directory';
  }
  isSymbolicLink(): boolean {
    return false;
  }
  isBlockDevice(): boolean {
    return false;
  }
  isCharacterDevice(): boolean {
    return false;
  }
  isFIFO(): boolean {
    return false;
  }
  isSocket(): boolean {
    return false;
  }
}

/** A `fs.Dirent` look-alike. */
export class SeamDirent extends SeamStats {
  constructor(
    readonly name: string,
    type: FsEntryType,
    size?: number,
    mtimeMs?: number,
  ) {
    super(type, size, mtimeMs);
  }
}

interface Walker {
  readonly adapter: GlobFsAdapter;
  lookup(path: string): EntryInfo | undefined;
  stop(): void;
  readonly exceeded: boolean;
  readonly counts: { unreadable: number; loops: number };
  readonly skipped: SearchSkip[];
}

function enoent(path: string): Error {
  // fast-glob drops ENOENT for paths that do not exist; it never reaches a caller.
  return Object.assign(new Error(`ENOENT: not found, "${path}"`), { code: 'ENOENT' });
}

function makeWalker(fs: FileSystem, options: { signal?: AbortSignal; maxEntries?: number }): Walker {
  const signal = options.signal;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const infos = new Map<string, EntryInfo>();
  const dirs = new Map<string, DirNode>();
  const counts = { unreadable: 0, loops: 0 };
  const skipped: SearchSkip[] = [];
  let listed = 0;
  let stopped = false;
  let exceeded = false;

  const skip = (entry: SearchSkip) => {
    if (entry.reason === 'loop') counts.loops++;
    else counts.unreadable++;
    if (skipped.length < MAX_RECORDED_SKIPS) skipped.push(entry);
  };

  async function list(path: string): Promise<EntryInfo[]> {
    if (stopped) return [];
    throwIfAborted(signal, `cannot list "${path}"`);
    const parent = dirs.get(posix.dirname(path));
    // Directories always go through resolve(), so the provider's confinement applies to each.
    let target: FsTarget;
    let entries: FsDirEntry[];
    try {
      target = await fs.resolve(path, { signal });
      for (let node = parent; node !== undefined; node = node.parent) {
        if (fs.contains(target, node.target)) {
          skip({ path, reason: 'loop' });
          return [];
        }
      }
      dirs.set(path, { target, parent });
      entries = await fs.listDir(target, { signal });
    } catch (err) {
      const error = toFsError(err, `cannot list "${path}"`);
      if (error.code === 'FS_ABORTED') throw error;
      if (error.code === 'FS_NOT_FOUND' || error.code === 'FS_NOT_DIRECTORY') {
        if (parent !== undefined) skip({ path, reason: 'unreadable', code: error.code, message: error.message });
        return [];
      }
      // The walk's own starting points must be readable; anything found below them may be skipped.
      if (parent === undefined) throw error;
      skip({ path, reason: 'unreadable', code: error.code, message: error.message });
      return [];
    }
    if (stopped) return [];
    listed += entries.length;
    if (listed > maxEntries) {
      exceeded = true;
      stopped = true;
    }
    const out: EntryInfo[] = [];
    for (const e of entries) {
      const info: EntryInfo = {
        name: e.name,
        type: e.type,
        target: e.target,
        ...(e.size === undefined ? {} : { size: e.size }),
        ...(e.mtimeMs === undefined ? {} : { mtimeMs: e.mtimeMs }),
      };
      infos.set(path === '/' ? `/${e.name}` : `${path}/${e.name}`, info);
      out.push(info);
    }
    return out;
  }

  async function statPath(path: string): Promise<SeamStats> {
    if (stopped) throw enoent(path);
    throwIfAborted(signal, `cannot stat "${path}"`);
    let info = infos.get(path);
    if (info === undefined) {
      const target = await fs.resolve(path, { signal });
      const st = await fs.stat(target, { signal });
      if (st === undefined) throw enoent(path);
      info = {
        name: posix.basename(path),
        type: st.type,
        target,
        ...(st.size === undefined ? {} : { size: st.size }),
        ...(st.mtimeMs === undefined ? {} : { mtimeMs: st.mtimeMs }),
      };
      infos.set(path, info);
    }
    return new SeamStats(info.type, info.size, info.mtimeMs);
  }

  const noSync = (name: string): never => {
    throw new FsError(
      'FS_IO_ERROR',
      `${name}: synchronous access is not available through the filesystem seam; use the asynchronous glob`,
    );
  };

  const callbackOf = (a: unknown, b: unknown) => (typeof a === 'function' ? a : b) as (error: Error | null, value?: unknown) => void;

  const statMethod = (path: string, callback: (error: Error | null, stats?: SeamStats) => void) => {
    statPath(normalise(path)).then(
      (stats) => callback(null, stats),
      (err: unknown) => callback(isFsError(err) ? err : (err as Error)),
    );
  };

  // Own enumerable properties of a plain object: fast-glob merges the option with
  // Object.assign, and any method missing here would silently fall back to the real disk.
  const adapter: GlobFsAdapter = {
    lstat: statMethod,
    stat: statMethod,
    lstatSync: () => noSync('lstatSync'),
    statSync: () => noSync('statSync'),
    readdir(path: string, a: unknown, b?: unknown) {
      const callback = callbackOf(a, b);
      const withTypes = typeof a === 'object' && a !== null && (a as { withFileTypes?: unknown }).withFileTypes === true;
      list(normalise(path)).then(
        (entries) =>
          callback(
            null,
            withTypes ? entries.map((e) => new SeamDirent(e.name, e.type, e.size, e.mtimeMs)) : entries.map((e) => e.name),
          ),
        (err: unknown) => callback(toFsError(err, `cannot list "${path}"`)),
      );
    },
    readdirSync: () => noSync('readdirSync'),
  };

  return {
    adapter,
    lookup: (path) => infos.get(path),
    stop: () => {
      stopped = true;
    },
    get exceeded() {
      return exceeded;
    },
    counts,
    skipped,
  };
}

function normalise(path: string): string {
  return posix.resolve('/', path);
}

/**
 * An fs adapter for fast-glob over `fs`: `lstat`, `stat`, `readdir` answer from the contract;
 * the sync methods throw FsError. Exposed for tests and for callers running fast-glob themselves.
 */
export function createGlobFsAdapter(fs: FileSystem, options: { signal?: AbortSignal } = {}): GlobFsAdapter {
  return makeWalker(fs, options).adapter;
}

