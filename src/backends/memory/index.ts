import { posix } from 'node:path';
import { Volume } from 'memfs';
import {
  FsError,
  FsTargetKey,
  FsVersion,
  KeyedMutex,
  canonicalPath,
  checkWriteIntent,
  compareNames,
  contentVersion,
  createFs,
  resolveLinks,
  type CreateFsOptions,
  type FileSystem,
  type FsCurrent,
  type FsDirEntry,
  type FsInfo,
  type FsProvider,
  type FsTarget,
  type NodeKind,
} from '../../seam/index.js';

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

export interface MemoryFileSystem extends FileSystem {
  readonly provider: MemoryProvider;
  snapshot(): MemorySnapshot;
  restore(snapshot: MemorySnapshot): void;
}

/** An in-memory filesystem on memfs: one Volume per instance, content-digest versions. */
export function createMemoryFs(options: MemoryFsOptions = {}): MemoryFileSystem {
  const provider = createMemoryProvider(options);
  const fs = createFs(provider, options);
  return Object.assign(fs, {
    provider,
    snapshot: () => provider.snapshot(),
    restore: (s: MemorySnapshot) => provider.restore(s),
  });
}

export function createMemoryProvider(options: { files?: MemoryTree; cwd?: string } = {}): MemoryProvider {
  const cwd = canonicalPath(options.cwd ?? '/', '/');
  // Never memfs's global volume, and never a relative path (memfs resolves those against process.cwd()).
  const vol = Volume.fromJSON({}, '/', { process: volumeProcess() });
  const lock = new KeyedMutex();

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
        return { type: 'file', version: contentVersion(bytes), size: bytes.byteLength, mtimeMs: Number(st.mtimeMs) };
      }
      if (st.isDirectory()) {
        const names = (vol.readdirSync(target.targetKey) as string[]).sort(compareNames);
        return { type: 'directory', version: FsVersion(`dir:${contentVersion(Buffer.from(names.join('\0')))}`) };
      }
      return { type: 'other', version: FsVersion('other') };
    },

    async read(target, { maxBytes }) {
      const quick = quickRead(target.targetKey, maxBytes);
      if (quick !== undefined) return { bytes: quick, version: contentVersion(quick) };
      const what = `cannot read "${target.displayPath}"`;
      const st = follow(target.targetKey);
      if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (!st.isFile()) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
      if (Number(st.size) > maxBytes) {
        throw new FsError('FS_TOO_LARGE', `${what}: ${st.size} bytes exceeds the ${maxBytes}-byte limit`);
      }
      const bytes = readFile(target.targetKey);
      return { bytes, version: contentVersion(bytes) };
    },

    write(target, { intent, produce }) {
      const key = target.targetKey;
      return lock.run(key, () => {
        const what = `cannot write "${target.displayPath}"`;
        const before = current(key, what);
        checkWriteIntent(intent, before, what);
        const bytes = produce(before);
        // An existing file's directory exists.
        if (before === undefined) vol.mkdirSync(posix.dirname(key), { recursive: true });
        vol.writeFileSync(key, bytes);
        return { version: contentVersion(bytes), created: before === undefined };
      });
    },

    async listDir(target): Promise<FsDirEntry[]> {
      const what = `cannot list "${target.displayPath}"`;
      const st = follow(target.targetKey);
      if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (!st.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
      const names = (vol.readdirSync(target.targetKey) as string[]).sort(compareNames);
      // While the directory's key is still its real path, only a child that is a link needs resolving.
      // (realpath walks the path once; resolving it component by component made deep trees cubic.)
      const canonical = (realKey(target.targetKey) ?? (await resolveLinks(target.targetKey, reader))) === target.targetKey;
      const entries: FsDirEntry[] = [];
      for (const name of names) {
        const displayPath = posix.join(target.displayPath, name);
        const lexical = posix.join(target.targetKey, name);
        const own = canonical ? lstat(lexical) : undefined;
        // A link that loops is listed as `other` under its own name, never followed.
        const key = own && !own.isSymbolicLink() ? lexical : await resolveLinks(lexical, reader).catch(() => undefined);
        if (key === undefined) {
          entries.push({ name, type: 'other', target: { targetKey: FsTargetKey(lexical), displayPath } });
          continue;
        }
        const child = own && !own.isSymbolicLink() ? own : follow(key);
        const type = !child ? 'other' : child.isFile() ? 'file' : child.isDirectory() ? 'directory' : 'other';
        entries.push({
          name,
          type,
          target: { targetKey: FsTargetKey(key), displayPath },
          ...(type === 'file' ? { size: Number(child!.size) } : {}),
          ...(child ? { mtimeMs: Number(child.mtimeMs) } : {}),
        });
      }
      return entries;
    },

    remove(target, { intent }) {
      const key = target.targetKey;
      return lock.run(key, () => {
        const what = `cannot remove "${target.displayPath}"`;
        const before = current(key, what);
        if (before === undefined && intent === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
        checkWriteIntent(intent, before, what);
        vol.unlinkSync(key);
      });
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
