import { posix } from 'node:path';
import { Volume } from 'memfs';
import {
  FsError,
  FsTargetKey,
  FsVersion,
  UNVERSIONED,
  canonicalPath,
  checkRename,
  checkRmdir,
  compareNames,
  contentVersion,
  expectHolds,
  depthFirst,
  isExecutableMode,
  withExecutable,
  observe,
  resolveLinks,
  type CreateFsOptions,
  type FileSystem,
  type FsCurrent,
  type FsDirEntry,
  type FsInfo,
  type FsProvider,
  type FsSwapResult,
  type FsTarget,
  type FsWalkOptions,
  type NodeKind,
  type RenameSide,
} from '../../seam/index.js';
import { applyMemoryBatch } from './batch.js';

/** A seed or snapshot entry: file content, `null` for a directory, or a symlink. */
export type MemoryEntry = string | Uint8Array | null | { readonly symlink: string };
/** Flat tree of absolute (or cwd-relative) path → entry. */
export type MemoryTree = Readonly<Record<string, MemoryEntry>>;
export type MemorySnapshot = Readonly<Record<string, Uint8Array | null | { readonly symlink: string }>>;

export interface MemoryFsOptions extends CreateFsOptions {
  /** Initial content; relative paths are taken relative to `cwd`. */
  readonly files?: MemoryTree;
}

export interface MemoryProvider extends FsProvider {
  /** The instance's own memfs Volume, for out-of-band changes in tests. */
  readonly volume: Volume;
  snapshot(): MemorySnapshot;
  restore(snapshot: MemorySnapshot): void;
}

export function createMemoryProvider(options: { files?: MemoryTree; cwd?: string } = {}): MemoryProvider {
  const cwd = canonicalPath(options.cwd ?? '/', '/');
  // Never memfs's global volume, and never a relative path (memfs resolves those against process.cwd()).
  const vol = Volume.fromJSON({}, '/', { process: volumeProcess() });

  const lstat = (p: string) => {
    try {
      return vol.lstatSync(p);
    } catch (err) {
      if (isAbsentError(err)) return undefined;
      throw err;
    }
  };
  const follow = (p: string) => {
    try {
      return vol.statSync(p);
    } catch (err) {
      if (isAbsentError(err)) return undefined;
      throw err;
    }
  };
  const reader = {
    kind(p: string): NodeKind {
      const st = lstat(p);
      if (!st) return 'missing';
      if (st.isSymbolicLink()) return 'link';
      if (st.isDirectory()) return 'directory';
      return st.isFile() ? 'file' : 'other';
    },
    readlink: (p: string) => String(vol.readlinkSync(p)),
  };

  /**
   * When every component of `path` exists, memfs's realpath gives what resolveLinks would (the
   * same hop limit, links relative to their directory) in one walk instead of one per component.
   * Anything else (missing, dangling, looping, refused) goes the long way.
   */
  const realKey = (path: string): string | undefined => {
    try {
      return String(vol.realpathSync(path));
    } catch {
      return undefined;
    }
  };

  const readFile = (key: string): Uint8Array => {
    const buf = vol.readFileSync(key) as Buffer;
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  };

  /**
   * The bytes of the regular file at `key` (up to `maxBytes`) through one descriptor, so one path
   * walk instead of a stat and a read. Undefined when that does not plainly succeed (absent, not a
   * file, refused, too large): the caller then takes the stat-first path for its exact answer.
   */
  const quickRead = (key: string, maxBytes: number): Uint8Array | undefined => {
    let fd: number;
    try {
      fd = vol.openSync(key, 'r');
    } catch {
      return undefined;
    }
    try {
      const st = vol.fstatSync(fd);
      if (!st.isFile() || Number(st.size) > maxBytes) return undefined;
      const buf = vol.readFileSync(fd) as Buffer;
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } finally {
      vol.closeSync(fd);
    }
  };

  /** The current file at `key`, or undefined; anything but a regular file is refused. */
  const current = (key: string, what: string): FsCurrent | undefined => {
    const quick = quickRead(key, Infinity);
    if (quick !== undefined) return { bytes: quick, version: contentVersion(quick) };
    const st = follow(key);
    if (!st) return undefined;
    if (!st.isFile()) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
    const bytes = readFile(key);
    return { bytes, version: contentVersion(bytes) };
  };

  /** D1: the directory and its missing parents; a file in the way is FS_NOT_DIRECTORY. */
  const mkdirs = (key: string, what: string) => {
    for (let dir = key; ; dir = posix.dirname(dir)) {
      const st = follow(dir);
      if (st?.isDirectory()) break;
      if (st) throw new FsError('FS_NOT_DIRECTORY', `${what}: "${dir}" is not a directory`);
      if (dir === '/') break;
    }
    vol.mkdirSync(key, { recursive: true });
  };

  /** The entries of a directory whose key is `canonical`ly its real path (then only links need resolving). */
  const children = async (target: FsTarget, canonical: boolean, wantsStats?: (name: string) => boolean): Promise<FsDirEntry[]> => {
    const dirents = vol.readdirSync(target.targetKey, { withFileTypes: true }) as unknown as { name: string; isFile(): boolean; isDirectory(): boolean }[];
    dirents.sort((a, b) => compareNames(a.name, b.name));
    const entries: FsDirEntry[] = [];
    for (const dirent of dirents) {
      const name = dirent.name;
      // One segment below a canonical key: plain concatenation is the join.
      const dirKey = target.targetKey;
      const lexical = dirKey === '/' ? `/${name}` : `${dirKey}/${name}`;
      const display = target.displayPath;
      const displayPath = display.startsWith('/') && !display.endsWith('/') ? `${display}/${name}` : posix.join(display, name);
      // Asked to spare stats: the listing's own type is enough for what is not a link.
      if (canonical && wantsStats && (dirent.isDirectory() || (dirent.isFile() && !wantsStats(name)))) {
        entries.push({ name, type: dirent.isFile() ? 'file' : 'directory', target: { targetKey: FsTargetKey(lexical), displayPath } });
        continue;
      }
      const own = canonical ? lstat(lexical) : undefined;
      const plain = own !== undefined && !own.isSymbolicLink();
      // A looping link resolves to nothing: listed under its own name, never followed.
      const key = plain ? lexical : await resolveLinks(lexical, reader).catch(() => undefined);
      const child = plain ? own : key === undefined ? undefined : follow(key);
      // P4: a dangling or looping link is `other`.
      const type = !child ? 'other' : child.isFile() ? 'file' : child.isDirectory() ? 'directory' : 'other';
      entries.push({
        name,
        type,
        target: { targetKey: FsTargetKey(key ?? lexical), displayPath },
        ...(type === 'file' ? { size: Number(child!.size), executable: isExecutableMode(child!.mode) } : {}),
        ...(child ? { mtimeMs: Number(child.mtimeMs) } : {}),
      });
    }
    return entries;
  };

  /** D4: one listing per real subdirectory; below the top, a real subdirectory's key is its real path. */
  const walkTree = (top: FsTarget, signal: AbortSignal | undefined, hooks: Pick<FsWalkOptions, 'prune' | 'onUnreadable' | 'wantsStats'>) => {
    const { wantsStats, ...walkHooks } = hooks;
    const list = (dir: FsTarget, isTop: boolean, prefix: string) => {
      if (isTop) return provider.listDir(dir, { signal });
      return children(dir, true, wantsStats && ((name: string) => wantsStats(prefix === '' ? name : `${prefix}/${name}`, name)));
    };
    return depthFirst(top, list, walkHooks);
  };

  const seed = (tree: MemoryTree | MemorySnapshot) => {
    for (const [raw, entry] of Object.entries(tree)) {
      const p = canonicalPath(raw, cwd);
      if (entry === null) {
        vol.mkdirSync(p, { recursive: true });
        continue;
      }
      vol.mkdirSync(posix.dirname(p), { recursive: true });
      if (typeof entry === 'object' && !(entry instanceof Uint8Array)) vol.symlinkSync(entry.symlink, p);
      else vol.writeFileSync(p, typeof entry === 'string' ? entry : Buffer.from(entry));
    }
  };
  vol.mkdirSync(cwd, { recursive: true });
  seed(options.files ?? {});

  const provider: MemoryProvider = {
    cwd,
    volume: vol,

    async resolve(path: string): Promise<FsTarget> {
      const key = realKey(path) ?? (await resolveLinks(path, reader));
      return { targetKey: FsTargetKey(key), displayPath: path };
    },

    async stat(target): Promise<FsInfo | undefined> {
      const st = follow(target.targetKey);
      if (!st) return undefined;
      if (st.isFile()) {
        const bytes = readFile(target.targetKey);
        return { type: 'file', version: contentVersion(bytes), size: bytes.byteLength, mtimeMs: Number(st.mtimeMs), executable: isExecutableMode(st.mode) };
      }
      if (st.isDirectory()) {
        const names = (vol.readdirSync(target.targetKey) as string[]).sort(compareNames);
        return { type: 'directory', version: FsVersion(`dir:${contentVersion(Buffer.from(names.join('\0')))}`) };
      }
      return { type: 'other', version: FsVersion('other') };
    },

    async read(target, { maxBytes, unversioned }) {
      const quick = quickRead(target.targetKey, maxBytes);
      if (quick !== undefined) return { bytes: quick, version: unversioned ? UNVERSIONED : contentVersion(quick) };
      const what = `cannot read "${target.displayPath}"`;
      const st = follow(target.targetKey);
      if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (!st.isFile()) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
      if (Number(st.size) > maxBytes) {
        throw new FsError('FS_TOO_LARGE', `${what}: ${st.size} bytes exceeds the ${maxBytes}-byte limit`);
      }
      const bytes = readFile(target.targetKey);
      return { bytes, version: unversioned ? UNVERSIONED : contentVersion(bytes) };
    },

    async swap(target, { expect, bytes }): Promise<FsSwapResult> {
      // Synchronous from the comparison to the publication, so atomic (G7).
      const key = target.targetKey;
      const before = current(key, `cannot write "${target.displayPath}"`);
      if (!expectHolds(expect, before)) return { ok: false, current: observe(before) };
      if (bytes === null) {
        if (before !== undefined) vol.unlinkSync(key);
        return { ok: true, existed: before !== undefined };
      }
      // An existing file's directory exists.
      if (before === undefined) mkdirs(posix.dirname(key), `cannot write "${target.displayPath}"`);
      vol.writeFileSync(key, bytes);
      return { ok: true, existed: before !== undefined, version: contentVersion(bytes) };
    },

    async applyBatch(swaps) {
      return applyMemoryBatch({ vol, current, mkdirs }, swaps);
    },

    async setExecutable(target, executable) {
      const st = follow(target.targetKey);
      const what = `cannot change the mode of "${target.displayPath}"`;
      if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (!st.isFile()) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
      vol.chmodSync(target.targetKey, withExecutable(Number(st.mode) & 0o7777, executable));
    },

    async symlink(target, linkText) {
      const what = `cannot create the link "${target.displayPath}"`;
      const parent = follow(posix.dirname(target.targetKey));
      if (!parent) throw new FsError('FS_NOT_FOUND', `${what}: the parent directory does not exist`);
      if (!parent.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: the parent is not a directory`);
      if (lstat(target.targetKey)) throw new FsError('FS_ALREADY_EXISTS', `${what}: something is already there`);
      vol.symlinkSync(linkText, target.targetKey);
    },

    async readlink(target) {
      const what = `cannot read the link "${target.displayPath}"`;
      const st = lstat(target.targetKey);
      if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (!st.isSymbolicLink()) throw new FsError('FS_INVALID_ARGUMENT', `${what}: not a symbolic link`);
      return String(vol.readlinkSync(target.targetKey));
    },

    async removeLink(target) {
      const what = `cannot remove the link "${target.displayPath}"`;
      const st = lstat(target.targetKey);
      if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (!st.isSymbolicLink()) throw new FsError('FS_INVALID_ARGUMENT', `${what}: not a symbolic link`);
      vol.unlinkSync(target.targetKey);
    },

    async renameLink(from, to, { replace }) {
      const what = `cannot move the link "${from.displayPath}" to "${to.displayPath}"`;
      const st = lstat(from.targetKey);
      if (!st) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
      if (!st.isSymbolicLink()) throw new FsError('FS_INVALID_ARGUMENT', `${what}: the source is not a symbolic link`);
      if (from.targetKey === to.targetKey) return;
      const parent = follow(posix.dirname(to.targetKey));
      if (!parent) throw new FsError('FS_NOT_FOUND', `${what}: the destination's directory does not exist`);
      if (!parent.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: the destination's parent is not a directory`);
      const there = lstat(to.targetKey);
      if (there && !replace) throw new FsError('FS_ALREADY_EXISTS', `${what}: the destination exists`);
      if (there?.isDirectory()) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the destination is a directory`);
      // Made anew rather than renamed (memfs follows a looping link in a rename); synchronous, so
      // atomic for every other caller.
      const text = String(vol.readlinkSync(from.targetKey));
      if (there) vol.unlinkSync(to.targetKey);
      vol.unlinkSync(from.targetKey);
      vol.symlinkSync(text, to.targetKey);
    },

    async mkdir(target) {
      mkdirs(target.targetKey, `cannot create directory "${target.displayPath}"`);
    },

    async rmdir(target, { recursive }) {
      const what = `cannot remove directory "${target.displayPath}"`;
      const st = follow(target.targetKey);
      if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (!st.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
      checkRmdir(what, vol.readdirSync(target.targetKey).length, recursive);
      vol.rmSync(target.targetKey, { recursive: true });
    },

    async rename(from, to, options) {
      const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
      const side = (key: string): RenameSide | undefined => {
        const st = follow(key);
        if (!st) return undefined;
        if (st.isFile()) return { type: 'file', version: contentVersion(readFile(key)) };
        if (st.isDirectory()) return { type: 'directory', version: FsVersion('dir'), empty: vol.readdirSync(key).length === 0 };
        return { type: 'other', version: FsVersion('other') };
      };
      const replacing = checkRename(what, side(from.targetKey), side(to.targetKey), options);
      if (replacing === 'none') mkdirs(posix.dirname(to.targetKey), what);
      else if (replacing === 'directory') vol.rmdirSync(to.targetKey);
      else vol.unlinkSync(to.targetKey);
      vol.renameSync(from.targetKey, to.targetKey);
    },

    walk(target, { signal, prune, onUnreadable, wantsStats }) {
      return walkTree(target, signal, { ...(prune ? { prune } : {}), ...(onUnreadable ? { onUnreadable } : {}), ...(wantsStats ? { wantsStats } : {}) });
    },

    async listDir(target, { stats }): Promise<FsDirEntry[]> {
      const what = `cannot list "${target.displayPath}"`;
      const st = follow(target.targetKey);
      if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (!st.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
      // While the directory's key is still its real path, only a child that is a link needs resolving.
      // (realpath walks the path once; resolving it component by component made deep trees cubic.)
      const canonical = (realKey(target.targetKey) ?? (await resolveLinks(target.targetKey, reader))) === target.targetKey;
      return children(target, canonical, stats === false ? () => false : undefined);
    },

    snapshot(): MemorySnapshot {
      const out: Record<string, Uint8Array | null | { symlink: string }> = {};
      const walk = (dir: string) => {
        for (const name of (vol.readdirSync(dir) as string[]).sort(compareNames)) {
          const p = posix.join(dir, name);
          const st = vol.lstatSync(p);
          if (st.isSymbolicLink()) out[p] = { symlink: String(vol.readlinkSync(p)) };
          else if (st.isDirectory()) {
            out[p] = null;
            walk(p);
          } else if (st.isFile()) out[p] = new Uint8Array(readFile(p));
        }
      };
      walk('/');
      return out;
    },

    restore(snapshot: MemorySnapshot) {
      vol.reset();
      vol.mkdirSync(cwd, { recursive: true });
      seed(snapshot);
    },
  };
  return provider;
}

/**
 * The process view memfs consults for a volume. memfs asks for the uid and gid on every path
 * walk, a system call each time (slow on some virtual machines); they are read once here.
 */
function volumeProcess() {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  return {
    cwd: () => '/',
    platform: process.platform,
    env: {},
    emitWarning: (message: string, type: string) => process.emitWarning(message, type),
    getuid: () => uid,
    getgid: () => gid,
  };
}

function isAbsentError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
