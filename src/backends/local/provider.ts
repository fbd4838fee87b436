import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readdirSync, realpathSync, statSync, promises as nodeFsp, type BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { posix, resolve as resolveNative } from 'node:path';
// Individual seam modules rather than its index: a provider needs only these few.
import { FsError, throwIfAborted, toFsError } from '../../seam/errors.js';
import { canonicalPath, isWithin } from '../../seam/path.js';
import { KeyedMutex } from '../../seam/lock.js';
import { forEachBounded } from '../../seam/settle.js';
import { compareNames, resolveLinks, type LinkReader, type NodeKind } from '../../seam/resolve.js';
import { checkRename, checkRmdir, expectHolds, observe, type RenameSide } from '../../seam/swap.js';
import {
  FsTargetKey,
  FsVersion,
  UNVERSIONED,
  type FsCurrent,
  type FsDirEntry,
  type FsExpect,
  type FsInfo,
  type FsObservation,
  type FsProvider,
  type FsProviderRename,
  type FsSwapResult,
  type FsTarget,
  type FsWalkEntry,
  type FsVersion as FsVersionType,
} from '../../seam/types.js';
import { contentVersion } from '../../seam/version.js';
import { isExecutableMode, withExecutable } from '../../seam/modes.js';
import { DirAnchor, Moved, hardenedOpenSupported, openDir as openDirWith, openDirSync, procAnchoringAvailable, type AnchorMode } from './anchor.js';
import { MAX_BUFFER, hashBounded, readBounded } from './io.js';
import { VersionCache, isRacilyClean, sameTuple, wallClockNs } from './version-cache.js';

export interface LocalProviderOptions {
  /** The directory everything is confined to. Made absolute and canonicalised (realpath) once, here. */
  readonly root: string;
  /** Default directory for relative paths: absolute inside the root, or relative to it (default: the root). */
  readonly cwd?: string;
  /**
   * fsync the temp file before the rename and the directory after it (default true). Without it,
   * writes stay atomic for readers but a power loss may lose the latest ones.
   */
  readonly durable?: boolean;
  /** Descriptor verification: `proc` (Linux), `inode` (portable fallback), or `auto` (default). */
  readonly anchoring?: 'auto' | AnchorMode;
  /** See VersionCache: how recent a timestamp must be for a cached version to be distrusted (default 2000). */
  readonly racyWindowMs?: number;
  /** Wall clock in nanoseconds since the epoch (tests inject one). */
  readonly clock?: () => bigint;
  /**
   * For tests only (fault injection), not a stable API: the `fs.promises` functions every file
   * operation goes through, including those on the handles its `open` returns. Default: node's.
   */
  readonly io?: LocalIo;
}

/** What the provider calls on `fs.promises` (see `LocalProviderOptions.io`). */
export type LocalIo = Pick<
  typeof nodeFsp,
  'open' | 'lstat' | 'stat' | 'readlink' | 'realpath' | 'readdir' | 'mkdir' | 'rmdir' | 'link' | 'rename' | 'unlink' | 'access'
>;

export interface SweepOptions {
  /** Only temp files whose mtime is older than this are removed (default 10 minutes). */
  readonly olderThanMs?: number;
}

export interface LocalProvider extends FsProvider {
  readonly root: string;
  readonly reservedNames: RegExp;
  readonly cwd: string;
  readonly anchoring: AnchorMode;
  readonly durable: boolean;
  /**
   * Removes temp files of this provider's own naming pattern (left by a process killed mid-write)
   * anywhere under the root; never any other file. Returns the real paths removed.
   */
  sweepTemps(options?: SweepOptions): Promise<string[]>;
}

/** `.<up to 64 bytes of the target name>.<32 hex digits>.dsh-tmp`, in the target's directory. */
export const TEMP_NAME_PATTERN = /^\..*\.[0-9a-f]{32}\.dsh-tmp$/s;
const TEMP_SUFFIX = '.dsh-tmp';

/** What link(2) answers on a filesystem without hard links: publish by rename instead. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);
const TEMP_PREFIX_BYTES = 64;
const MAX_REDIRECTS = 4;
const READ_ATTEMPTS = 3;
/** listDir entries between two turns of the event loop. */
const LIST_YIELD_EVERY = 256;
/** A file may grow this much beyond its fstat size while it is hashed before it counts as changing. */
const HASH_SLACK = 64 * 1024 * 1024;

const O_NOFOLLOW = constants.O_NOFOLLOW;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
/** Files up to this size are read by searches with synchronous calls (a short hold of the event loop). */
const SYNC_READ_BYTES = 256 * 1024;
const LEAF_READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW;
/**
 * Linux's O_PATH, which node does not export: 010000000 on the architectures whose fcntl flags
 * follow asm-generic (alpha, parisc and sparc differ; they keep the check by name).
 */
const O_PATH =
  process.platform === 'linux' && ['x64', 'arm64', 'arm', 'ia32', 'riscv64', 'loong64', 's390x', 'ppc64'].includes(process.arch)
    ? 0o10000000
    : undefined;

export function isTempName(name: string): boolean {
  return name.endsWith(TEMP_SUFFIX) && TEMP_NAME_PATTERN.test(name);
}

export function tempName(target: string): string {
  let prefix = '';
  let bytes = 0;
  for (const ch of target) {
    bytes += Buffer.byteLength(ch);
    if (bytes > TEMP_PREFIX_BYTES) break;
    prefix += ch;
  }
  return `.${prefix}.${randomBytes(16).toString('hex')}${TEMP_SUFFIX}`;
}

/** A provider for a directory on local disk, confined to it, with atomic durable writes. */
export function createLocalProvider(options: LocalProviderOptions): LocalProvider {
  if (typeof options !== 'object' || options === null || typeof options.root !== 'string' || options.root === '') {
    throw new FsError('FS_INVALID_ARGUMENT', 'createLocalProvider needs a root directory: { root: string }');
  }
  if (options.root.includes('\0')) throw new FsError('FS_INVALID_ARGUMENT', 'the root path contains a NUL byte');
  if (!hardenedOpenSupported()) {
    throw new FsError('FS_IO_ERROR', 'this platform has no O_NOFOLLOW/O_DIRECTORY, so the local provider cannot confine paths here');
  }
  const given = resolveNative(options.root);
  let root: string;
  try {
    root = realpathSync(given);
    if (!statSync(root).isDirectory()) {
      throw new FsError('FS_NOT_DIRECTORY', `cannot use root "${options.root}": not a directory`);
    }
  } catch (err) {
    throw toFsError(err, `cannot use root "${options.root}"`);
  }
  const cwd = rootCwd(options.cwd, given, root);

  const requested = options.anchoring ?? 'auto';
  let mode: AnchorMode;
  if (requested === 'auto') mode = procAnchoringAvailable() ? 'proc' : 'inode';
  else if (requested === 'proc' || requested === 'inode') mode = requested;
  else throw new FsError('FS_INVALID_ARGUMENT', `unknown anchoring mode ${JSON.stringify(requested)}`);
  if (mode === 'proc' && !procAnchoringAvailable()) {
    throw new FsError('FS_INVALID_ARGUMENT', 'anchoring "proc" needs a Linux /proc that reports descriptor paths');
  }

  const fsp: LocalIo = options.io ?? nodeFsp;
  // listDir lstats its entries synchronously (through the same anchored paths): an async lstat is
  // a thread-pool round trip each, which made a listing 60-100x readdir. An injected io keeps the
  // async calls, so that every call still goes through it.
  const entryLstat = options.io === undefined ? (path: string) => lstatSync(path, { bigint: true }) : undefined;
  const openDir = (dir: string, root: string, mode: AnchorMode) => openDirWith(dir, root, mode, fsp);
  // A walk opens and lists each directory with synchronous calls for the same reason (the checks
  // are openDir's); not with an injected io, nor where descriptors cannot be pinned through /proc.
  const syncWalk = options.io === undefined && mode === 'proc' && O_PATH !== undefined;
  const durable = options.durable ?? true;
  const clock = options.clock ?? wallClockNs;
  const racyWindowMs = options.racyWindowMs ?? 2000;
  if (typeof racyWindowMs !== 'number' || !Number.isFinite(racyWindowMs) || racyWindowMs < 0) {
    throw new FsError('FS_INVALID_ARGUMENT', `racyWindowMs must be a non-negative number, got ${String(racyWindowMs)}`);
  }
  const racyWindowNs = BigInt(Math.round(racyWindowMs * 1e6));
  const cache = new VersionCache({ now: clock, racyWindowNs });
  const lock = new KeyedMutex();
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

  // ---------------------------------------------------------------------------------------------
  // Resolution (P2, P3): every symlink hop is checked; the real path is the target key.
  // ---------------------------------------------------------------------------------------------

  async function resolveKey(path: string): Promise<string> {
    const outside = (where: string) =>
      new FsError('FS_OUTSIDE_ROOT', `"${path}" leads through a symbolic link to "${where}", which is outside the root "${root}"`);
    const reader: LinkReader = {
      async kind(p: string): Promise<NodeKind> {
        // The root was canonicalised at construction: its ancestors are directories, and nothing
        // else outside it is ever looked at.
        if (p !== root && isWithin(p, root)) return 'directory';
        if (!isWithin(root, p)) throw outside(p);
        try {
          const st = await fsp.lstat(p);
          if (st.isSymbolicLink()) return 'link';
          if (st.isDirectory()) return 'directory';
          return st.isFile() ? 'file' : 'other';
        } catch (err) {
          if (isAbsent(err)) return 'missing';
          throw err;
        }
      },
      readlink: (p: string) => fsp.readlink(p),
    };
    const key = await resolveLinks(path, reader, (resolved) => {
      if (!isWithin(root, resolved) && !isWithin(resolved, root)) throw outside(resolved);
    });
    if (!isWithin(root, key)) throw outside(key);
    return key;
  }

  /** Runs `fn` on the key; when the tree changed under it, resolves the key again and retries. */
  async function withRedirects<T>(key: string, what: string, fn: (key: string) => Promise<T>): Promise<T> {
    let current = key;
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn(current);
      } catch (err) {
        if (!(err instanceof Moved)) throw err;
        if (attempt >= MAX_REDIRECTS) {
          throw new FsError('FS_IO_ERROR', `${what}: the path kept changing (symbolic links or directories were swapped) while in use`);
        }
        current = await resolveKey(current);
      }
    }
  }

  async function guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw mapError(err, what);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Anchored access: every operation acts through a verified directory descriptor.
  // ---------------------------------------------------------------------------------------------

  async function openParent(key: string): Promise<DirAnchor | undefined> {
    try {
      return await openDir(posix.dirname(key), root, mode);
    } catch (err) {
      if (isAbsent(err)) return undefined;
      throw err;
    }
  }

  /** Opens (creating what is missing, inside the root, anchored) the directory `dir`. */
  async function ensureDir(dir: string, what: string, made: string[] = []): Promise<DirAnchor> {
    try {
      return await openDir(dir, root, mode);
    } catch (err) {
      if (errnoOf(err) === 'ENOTDIR') throw new FsError('FS_NOT_DIRECTORY', `${what}: a parent of the path is not a directory`);
      if (errnoOf(err) !== 'ENOENT' || dir === root) throw err;
    }
    const parent = await ensureDir(posix.dirname(dir), what, made);
    const name = posix.basename(dir);
    try {
      await fsp.mkdir(parent.child(name));
      made.push(dir);
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') {
        await parent.close();
        throw err;
      }
      const st = await fsp.lstat(parent.child(name)).finally(() => parent.close());
      // A link planted after the path was resolved: resolve again rather than follow it blindly.
      if (st.isSymbolicLink()) throw new Moved(dir);
      if (!st.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: a parent of the path is not a directory`);
      return openDir(dir, root, mode);
    }
    await parent.close();
    return openDir(dir, root, mode);
  }

  /** Runs `fn` in the anchored parent directory of `key` (FS_NOT_FOUND when there is none). */
  async function inParent<T>(key: string, what: string, fn: (anchor: DirAnchor, name: string) => Promise<T>): Promise<T> {
    if (key === root) throw new FsError('FS_INVALID_ARGUMENT', `${what}: it is the root`);
    const anchor = await openParent(key);
    if (anchor === undefined) throw notFound(what);
    try {
      return await fn(anchor, posix.basename(key));
    } finally {
      await anchor.close();
    }
  }

  async function removeMade(made: readonly string[]): Promise<void> {
    for (const dir of [...made].reverse()) {
      try {
        const parent = await openDir(posix.dirname(dir), root, mode);
        try {
          await fsp.rmdir(parent.child(posix.basename(dir)));
        } finally {
          await parent.close();
        }
      } catch {
        return; // best effort: something else now lives there, or the disk is failing
      }
    }
  }

  /**
   * A search's read of a small file, with synchronous calls (ten thread-pool round trips per file
   * were most of grep's time) and the checks of openParent, openLeaf and readLeaf. Undefined: not
   * small, or it changed while read; the caller then takes the general path.
   */
  function readSmallSync(key: string, maxBytes: number, what: string): Uint8Array | undefined {
    let parent;
    try {
      parent = openDirSync(posix.dirname(key), root);
    } catch (err) {
      if (isAbsent(err)) throw notFound(what);
      throw err;
    }
    let pinned: number | undefined;
    let fd: number | undefined;
    try {
      try {
        pinned = openSync(parent.child(posix.basename(key)), O_PATH! | O_NOFOLLOW);
      } catch (err) {
        if (isAbsent(err)) throw notFound(what);
        throw err;
      }
      const st = fstatSync(pinned, { bigint: true });
      if (st.isSymbolicLink()) throw new Moved(key);
      if (!st.isFile()) throw notRegular(what, st);
      if (st.size > BigInt(Math.min(maxBytes, SYNC_READ_BYTES))) return undefined;
      // The pinned inode itself is opened, so its stat is the one to compare after the read.
      fd = openSync(`/proc/self/fd/${pinned}`, LEAF_READ_FLAGS & ~O_NOFOLLOW);
      const before = st;
      const size = Number(before.size);
      // One byte more than the size: a file that grew is read again the general way.
      const buf = Buffer.allocUnsafe(size + 1);
      let got = 0;
      for (let n; got < buf.length && (n = readSync(fd, buf, got, buf.length - got, null)) > 0; ) got += n;
      if (got !== size || !sameTuple(before, fstatSync(fd, { bigint: true }))) return undefined;
      return new Uint8Array(buf.buffer, buf.byteOffset, size);
    } finally {
      if (fd !== undefined) closeSync(fd);
      if (pinned !== undefined) closeSync(pinned);
      parent.close();
    }
  }

  interface Leaf {
    readonly handle: FileHandle;
    readonly st: BigIntStats;
  }

  /** Opens the regular file `name` in `anchor` without following a link and without blocking. */
  async function openLeaf(anchor: DirAnchor, name: string, key: string, what: string): Promise<Leaf | undefined> {
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
      if (code === 'ENOENT') return undefined;
      if (code === 'ELOOP') throw new Moved(key);
      if (code === 'ENXIO' || code === 'EISDIR') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
      throw err;
    } finally {
      await pinned?.close().catch(() => undefined);
    }
    try {
      const opened = await handle.stat({ bigint: true });
      if (!opened.isFile()) throw notRegular(what, opened);
      if (mode === 'inode') {
        // Without /proc the name was opened by full path: prove it still names this inode, in a
        // directory that is still where it was verified.
        const named = await fsp.lstat(path, { bigint: true });
        const dirNow = await fsp.realpath(anchor.path);
        if (dirNow !== anchor.path || named.dev !== opened.dev || named.ino !== opened.ino) throw new Moved(key);
      }
      return { handle, st: opened };
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
  }

  /** Reads a whole leaf, retrying while it changes underneath; the version is of exactly these bytes. */
  async function readLeaf(leaf: Leaf, maxBytes: number, what: string, versioned = true): Promise<FsCurrent & { st: BigIntStats }> {
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

  async function hashLeaf(leaf: Leaf, what: string): Promise<{ version: FsVersionType; st: BigIntStats }> {
    let before = leaf.st;
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      if (attempt > 0) before = await leaf.handle.stat({ bigint: true });
      const hashed = await hashBounded(leaf.handle, Number(before.size) + HASH_SLACK);
      const after = await leaf.handle.stat({ bigint: true });
      if (hashed !== undefined && sameTuple(before, after)) return { version: hashed.version, st: after };
    }
    throw new FsError('FS_IO_ERROR', `${what}: the file kept changing while it was read`);
  }

  async function listNames(anchor: DirAnchor): Promise<string[]> {
    const names = await fsp.readdir(anchor.self);
    return names.filter((n) => !isTempName(n)).sort(compareNames);
  }

  function dirVersion(names: readonly string[]): FsVersionType {
    return FsVersion(`dir:${contentVersion(Buffer.from(names.join('\0')))}`);
  }

  async function dirInfo(key: string): Promise<FsInfo> {
    const anchor = await openDir(key, root, mode);
    try {
      const st = await anchor.handle.stat({ bigint: true });
      return { type: 'directory', version: dirVersion(await listNames(anchor)), mtimeMs: msOf(st) };
    } finally {
      await anchor.close();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Atomic publication: temp in the same directory, exclusive, fsync, rename, fsync(dir).
  // ---------------------------------------------------------------------------------------------

  interface PublishOptions {
    readonly before: BigIntStats | undefined;
    /**
     * How to publish: `link` fails if a racing creator got there first; `link-or-rename` (an
     * unconditional write that saw no file) links, and renames over a file another process
     * created meanwhile, so "existed" is decided by the publishing call itself; `rename` replaces.
     */
    readonly mode: 'link' | 'link-or-rename' | 'rename';
    /** Re-check just before the rename that the target still holds this version. */
    readonly expect: FsVersionType | undefined;
    readonly signal: AbortSignal | undefined;
    readonly what: string;
    readonly key: string;
    /** Leave the directory unflushed (F1: the caller flushes it once for many files). */
    readonly deferred: boolean;
  }

  /** Publishes `bytes` at `name`; `replaced` says whether the publishing step replaced a file. */
  async function publish(
    anchor: DirAnchor,
    name: string,
    bytes: Uint8Array,
    o: PublishOptions,
  ): Promise<{ st: BigIntStats | undefined; replaced: boolean }> {
    let tmp = '';
    let handle: FileHandle | undefined;
    for (let attempt = 0; handle === undefined; attempt++) {
      tmp = tempName(name);
      try {
        // Exclusive and no-follow: a name planted in advance (even a symlink) is never written through.
        handle = await fsp.open(anchor.child(tmp), TEMP_FLAGS, o.before ? 0o600 : 0o666);
      } catch (err) {
        if (errnoOf(err) !== 'EEXIST' || attempt >= 3) throw err;
      }
    }
    let tmpExists = true;
    let replaced = false;
    try {
      await handle.writeFile(bytes);
      if (o.before) {
        const mine = await handle.stat({ bigint: true });
        if (isRoot && (mine.uid !== o.before.uid || mine.gid !== o.before.gid)) {
          await handle.chown(Number(o.before.uid), Number(o.before.gid)).catch(ignoreErrno('EPERM', 'EINVAL'));
        }
        // After chown, which clears set-id bits; the open mode was masked by the umask.
        await handle.chmod(Number(o.before.mode & 0o7777n));
      }
      if (durable) await handle.sync();
      if (o.expect !== undefined) await recheck(anchor, name, o.before, o.expect, o.what, o.key);
      throwIfAborted(o.signal, o.what);
      let linked = false;
      let present: boolean | undefined;
      if (o.mode !== 'rename') {
        try {
          await fsp.link(anchor.child(tmp), anchor.child(name));
          linked = true;
        } catch (err) {
          const code = errnoOf(err);
          if (code !== 'EEXIST' && !NO_HARD_LINKS.has(code ?? '')) throw err;
          // EEXIST: created meanwhile by someone else. Without hard links (a FUSE mount, FAT),
          // the check is ours, under the provider's lock, just before the rename.
          present = code === 'EEXIST' || (await entryExists(anchor.child(name)));
          if (present && o.mode === 'link') throw new Mismatch();
        }
      }
      if (!linked) {
        await fsp.rename(anchor.child(tmp), anchor.child(name));
        tmpExists = false;
        replaced = present ?? true;
      }
    } catch (err) {
      if (tmpExists) await fsp.unlink(anchor.child(tmp)).catch(() => undefined);
      await handle.close().catch(() => undefined);
      throw err;
    }
    // Published: the new bytes are what readers see, so from here nothing reports the write as
    // failed unless it really is in doubt. A link's temp name is housekeeping (sweepTemps finds
    // a leftover); a failed fstat only costs the version cache its entry.
    try {
      if (tmpExists) await unlinkTemp(anchor.child(tmp));
      const st = await handle.stat({ bigint: true }).catch(() => undefined);
      if (durable && !o.deferred) {
        try {
          await anchor.handle.sync();
        } catch (err) {
          throw toFsError(err, `${o.what}: the new content is in place, but its directory could not be flushed to disk, so it may not survive a crash`);
        }
      }
      return { st, replaced };
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  async function entryExists(path: string): Promise<boolean> {
    try {
      await fsp.lstat(path);
      return true;
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return false;
      throw err;
    }
  }

  async function unlinkTemp(path: string): Promise<void> {
    // One retry: a transient failure should not leave a second name for the published file.
    await fsp.unlink(path).catch(() => fsp.unlink(path)).catch(() => undefined);
  }

  /**
   * Narrows the window in which a writer that does not take our lock (an editor, another
   * process) could change the file between the guard check and the rename.
   */
  async function recheck(anchor: DirAnchor, name: string, before: BigIntStats | undefined, expect: FsVersionType, what: string, key: string) {
    let now: BigIntStats | undefined;
    try {
      now = await fsp.lstat(anchor.child(name), { bigint: true });
    } catch (err) {
      if (!isAbsent(err)) throw err;
    }
    const stale = () => new Mismatch();
    if (now === undefined || before === undefined || !now.isFile()) throw stale();
    if (sameTuple(now, before) && !isRacilyClean(now, clock(), racyWindowNs)) return;
    const leaf = await openLeaf(anchor, name, key, what).catch((err: unknown) => {
      if (err instanceof Moved) throw stale();
      throw err;
    });
    if (leaf === undefined) throw stale();
    try {
      const { version } = await hashLeaf(leaf, what);
      if (version !== expect) throw stale();
    } finally {
      await leaf.handle.close().catch(() => undefined);
    }
  }

  /** The version of an open leaf: from the stat-keyed cache, else hashed without holding the file in memory. */
  async function leafVersion(leaf: Leaf, key: string, what: string): Promise<FsVersionType> {
    const cached = cache.lookup(key, leaf.st);
    if (cached !== undefined) return cached;
    const { version, st } = await hashLeaf(leaf, what);
    cache.record(key, st, version);
    return version;
  }

  /**
   * G7 under the provider's lock: compare, then publish or remove. The existing file is never
   * read into memory: its version comes from the cache or a streaming hash, and only when the
   * expectation names one.
   */
  async function swapLocked(
    key: string,
    expect: FsExpect,
    bytes: Uint8Array | null,
    signal: AbortSignal | undefined,
    what: string,
    deferred: boolean,
  ): Promise<FsSwapResult> {
    if (key === root) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the root is a directory`);
    throwIfAborted(signal, what);
    const name = posix.basename(key);
    // Missing parents are created only once there is something to publish: a refused write
    // leaves no directory behind.
    let anchor = await openParent(key);
    try {
      const leaf = anchor && (await openLeaf(anchor, name, key, what));
      let version: FsVersionType | undefined;
      try {
        if (leaf && expect.kind !== 'any') version = await leafVersion(leaf, key, what);
      } finally {
        await leaf?.handle.close().catch(() => undefined);
      }
      const before = leaf && version !== undefined ? { version } : leaf ? { version: FsVersion('unhashed') } : undefined;
      if (!expectHolds(expect, before)) return { ok: false, current: observe(before) };
      throwIfAborted(signal, what);
      if (bytes === null) {
        if (leaf && anchor) {
          await fsp.unlink(anchor.child(name));
          cache.delete(key);
          if (durable && !deferred) await anchor.handle.sync();
        }
        return { ok: true, existed: leaf !== undefined };
      }
      // Replacing by rename needs only a writable directory; honour the file's own permission too.
      if (leaf && anchor) await fsp.access(anchor.child(name), constants.W_OK);
      const made: string[] = [];
      let published: { st: BigIntStats | undefined; replaced: boolean };
      try {
        anchor ??= await ensureDir(posix.dirname(key), what, made);
        published = await publish(anchor, name, bytes, {
          before: leaf?.st,
          mode: expect.kind === 'absent' ? 'link' : leaf ? 'rename' : 'link-or-rename',
          expect: expect.kind === 'present' ? expect.version : undefined,
          signal,
          what,
          key,
          deferred,
        });
      } catch (err) {
        // A failed write leaves no trace: drop the directories it made (rmdir refuses non-empty ones).
        await removeMade(made);
        if (!(err instanceof Mismatch) || anchor === undefined) throw err;
        return { ok: false, current: await observeNow(anchor, name, key, what) };
      }
      const written = contentVersion(bytes);
      if (published.st) cache.record(key, published.st, written);
      return { ok: true, existed: leaf !== undefined || published.replaced, version: written };
    } finally {
      await anchor?.close();
    }
  }

  /** The file a writer outside our lock left at `name`, as a swap reports it. */
  async function observeNow(anchor: DirAnchor, name: string, key: string, what: string): Promise<FsObservation> {
    const leaf = await openLeaf(anchor, name, key, what).catch((err: unknown) => {
      // Replaced by something that is not a file of ours to report: the caller re-resolves or fails.
      if (err instanceof Moved) throw new FsError('FS_STALE_VERSION', `${what}: the path changed while it was being written`);
      throw err;
    });
    if (leaf === undefined) return { kind: 'absent' };
    try {
      return { kind: 'present', version: await leafVersion(leaf, key, what) };
    } finally {
      await leaf.handle.close().catch(() => undefined);
    }
  }

  /** What a name in an anchored directory is, for rename's checks; a link planted meanwhile is Moved. */
  async function renameSide(anchor: DirAnchor | undefined, key: string, needVersion: boolean, what: string): Promise<RenameSide | undefined> {
    if (anchor === undefined) return undefined;
    const name = posix.basename(key);
    let st: BigIntStats;
    try {
      st = await fsp.lstat(anchor.child(name), { bigint: true });
    } catch (err) {
      if (isAbsent(err)) return undefined;
      throw err;
    }
    if (st.isSymbolicLink()) throw new Moved(key);
    if (st.isDirectory()) {
      const dir = await openDir(key, root, mode);
      try {
        return { type: 'directory', version: FsVersion('dir'), empty: (await fsp.readdir(dir.self)).length === 0 };
      } finally {
        await dir.close();
      }
    }
    if (!st.isFile()) return { type: 'other', version: FsVersion('other') };
    if (!needVersion) return { type: 'file', version: FsVersion('unhashed') };
    const leaf = await openLeaf(anchor, name, key, what);
    if (leaf === undefined) return undefined;
    try {
      return { type: 'file', version: await leafVersion(leaf, key, what) };
    } finally {
      await leaf.handle.close().catch(() => undefined);
    }
  }

  async function renameLocked(from: string, to: string, options: FsProviderRename, what: string): Promise<void> {
    if (from === root || to === root) throw new FsError('FS_INVALID_ARGUMENT', `${what}: the root cannot be moved or replaced`);
    const source = await openParent(from);
    if (source === undefined) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
    const made: string[] = [];
    let dest: DirAnchor | undefined;
    let moved = false;
    try {
      const src = await renameSide(source, from, options.expect !== undefined, what);
      dest = await openParent(to);
      const dst = await renameSide(dest, to, typeof options.replace === 'string', what);
      const replacing = checkRename(what, src, dst, options);
      dest ??= await ensureDir(posix.dirname(to), what, made);
      const [fromName, toName] = [posix.basename(from), posix.basename(to)];
      if (options.expect !== undefined) {
        const leaf = await openLeaf(source, fromName, from, what);
        if (leaf === undefined) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
        try {
          // As publish does: narrow the window for writers that do not take this lock.
          const { version } = await hashLeaf(leaf, what);
          if (version !== options.expect) throw new FsError('FS_STALE_VERSION', `${what}: the source changed since it was read`);
        } finally {
          await leaf.handle.close().catch(() => undefined);
        }
      }
      if (replacing === 'none') {
        // D3 wants one atomic rename (link + unlink would show both names for a moment), so a
        // name another process creates in the instant since the check above is replaced.
        const raced = await fsp.lstat(dest.child(toName)).then(() => true, () => false);
        if (raced) throw new FsError('FS_ALREADY_EXISTS', `${what}: the destination was created meanwhile`);
      }
      await fsp.rename(source.child(fromName), dest.child(toName));
      moved = true;
      cache.delete(from);
      cache.delete(to);
      if (durable) {
        await dest.handle.sync();
        if (dest.path !== source.path) await source.handle.sync();
      }
    } catch (err) {
      if (!moved) await removeMade(made);
      throw err;
    } finally {
      await source.close();
      await dest?.close();
    }
  }

  /** Removes a directory tree through anchored descriptors only: a subdirectory swapped for a link is never followed. */
  async function removeTree(anchor: DirAnchor, what: string): Promise<void> {
    for (const entry of await fsp.readdir(anchor.self, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        const child = await openDir(posix.join(anchor.path, entry.name), root, mode);
        try {
          await removeTree(child, what);
        } finally {
          await child.close();
        }
        await fsp.rmdir(anchor.child(entry.name));
      } else {
        await fsp.unlink(anchor.child(entry.name));
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The SPI.
  // ---------------------------------------------------------------------------------------------

  const provider: LocalProvider = {
    root,
    cwd,
    // The seam refuses these names in every caller's path, so a file of this pattern is always ours.
    reservedNames: TEMP_NAME_PATTERN,
    anchoring: mode,
    durable,

    resolve(path: string): Promise<FsTarget> {
      return guard(`cannot resolve "${path}"`, async () => {
        const key = await resolveKey(path);
        return { targetKey: FsTargetKey(key), displayPath: path };
      });
    },

    stat(target): Promise<FsInfo | undefined> {
      const what = `cannot stat "${target.displayPath}"`;
      return guard(what, () =>
        withRedirects(target.targetKey, what, async (key) => {
          if (key === root) return dirInfo(key);
          const anchor = await openParent(key);
          if (anchor === undefined) return undefined;
          try {
            const name = posix.basename(key);
            let st: BigIntStats;
            try {
              st = await fsp.lstat(anchor.child(name), { bigint: true });
            } catch (err) {
              if (isAbsent(err)) return undefined;
              throw err;
            }
            if (st.isSymbolicLink()) throw new Moved(key);
            if (st.isDirectory()) return await dirInfo(key);
            if (!st.isFile()) return { type: 'other', version: FsVersion('other') };
            const cached = cache.lookup(key, st);
            if (cached !== undefined) return { type: 'file', version: cached, size: Number(st.size), mtimeMs: msOf(st), executable: isExecutableMode(st.mode) };
            const leaf = await openLeaf(anchor, name, key, what);
            if (leaf === undefined) return undefined;
            try {
              const { version, st: after } = await hashLeaf(leaf, what);
              cache.record(key, after, version);
              return { type: 'file', version, size: Number(after.size), mtimeMs: msOf(after), executable: isExecutableMode(after.mode) };
            } finally {
              await leaf.handle.close().catch(() => undefined);
            }
          } finally {
            await anchor.close();
          }
        }),
      );
    },

    read(target, { maxBytes, unversioned }): Promise<FsCurrent> {
      const what = `cannot read "${target.displayPath}"`;
      return guard(what, () =>
        withRedirects(target.targetKey, what, async (key) => {
          if (key === root) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file (a directory)`);
          if (unversioned === true && syncWalk) {
            const quick = readSmallSync(key, maxBytes, what);
            if (quick !== undefined) return { bytes: quick, version: UNVERSIONED };
          }
          const anchor = await openParent(key);
          if (anchor === undefined) throw notFound(what);
          try {
            const leaf = await openLeaf(anchor, posix.basename(key), key, what);
            if (leaf === undefined) throw notFound(what);
            try {
              // Search reads without a digest: nothing to record then.
              const { bytes, version, st } = await readLeaf(leaf, maxBytes, what, unversioned !== true);
              if (unversioned !== true) cache.record(key, st, version);
              return { bytes, version };
            } finally {
              await leaf.handle.close().catch(() => undefined);
            }
          } finally {
            await anchor.close();
          }
        }),
      );
    },

    swap(target, { expect, bytes, signal, durability }) {
      const what = `cannot ${bytes === null ? 'remove' : 'write'} "${target.displayPath}"`;
      const deferred = durability === 'deferred';
      return guard(what, () =>
        withRedirects(target.targetKey, what, (key) => lock.run(key, () => swapLocked(key, expect, bytes, signal, what, deferred))),
      );
    },

    setExecutable(target, executable) {
      const what = `cannot change the mode of "${target.displayPath}"`;
      return guard(what, () =>
        withRedirects(target.targetKey, what, (key) =>
          // Under the swap lock: a write copies the old mode onto its new file, and must see this one.
          lock.run(key, async () => {
            if (key === root) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file (a directory)`);
            const anchor = await openParent(key);
            if (anchor === undefined) throw notFound(what);
            try {
              const leaf = await openLeaf(anchor, posix.basename(key), key, what);
              if (leaf === undefined) throw notFound(what);
              try {
                await leaf.handle.chmod(withExecutable(Number(leaf.st.mode & 0o7777n), executable));
              } finally {
                await leaf.handle.close().catch(() => undefined);
              }
            } finally {
              await anchor.close();
            }
          }),
        ),
      );
    },

    symlink(target, linkText) {
      const what = `cannot create the link "${target.displayPath}"`;
      const key = target.targetKey;
      // Made in the anchored parent and never followed: the text may name anything, resolve checks it.
      return guard(what, () => lock.run(key, () => inParent(key, what, (anchor, name) => nodeFsp.symlink(linkText, anchor.child(name)))));
    },

    readlink(target) {
      const what = `cannot read the link "${target.displayPath}"`;
      return guard(what, () =>
        inParent(target.targetKey, what, async (anchor, name) => {
          const st = await fsp.lstat(anchor.child(name));
          if (!st.isSymbolicLink()) throw new FsError('FS_INVALID_ARGUMENT', `${what}: not a symbolic link`);
          return fsp.readlink(anchor.child(name));
        }),
      );
    },

    flush(directories, { signal }) {
      return guard('cannot flush to disk', async () => {
        if (!durable) return;
        const keys = [...new Set(directories.map((d) => d.targetKey as string))];
        // Concurrently, a few at a time: each is one fsync of a directory.
        await forEachBounded(keys, FLUSH_CONCURRENCY, async (key) => {
          throwIfAborted(signal, 'cannot flush to disk');
          let anchor: DirAnchor;
          try {
            anchor = await openDir(key, root, mode);
          } catch (err) {
            // Gone (or never made): nothing published there to flush.
            if (isAbsent(err) || errnoOf(err) === 'ENOTDIR' || err instanceof Moved) return;
            throw err;
          }
          try {
            await anchor.handle.sync();
          } catch (err) {
            throw toFsError(err, `cannot flush "${key}" to disk: what was written there may not survive a crash`);
          } finally {
            await anchor.close();
          }
        });
      });
    },

    mkdir(target) {
      const what = `cannot create directory "${target.displayPath}"`;
      return guard(what, () =>
        withRedirects(target.targetKey, what, async (key) => {
          const made: string[] = [];
          const anchor = await ensureDir(key, what, made);
          try {
            if (durable && made.length > 0) {
              const parent = await openDir(posix.dirname(made[made.length - 1]!), root, mode);
              await parent.handle.sync().finally(() => parent.close());
            }
          } finally {
            await anchor.close();
          }
        }),
      );
    },

    rmdir(target, { recursive }) {
      const what = `cannot remove directory "${target.displayPath}"`;
      return guard(what, () =>
        withRedirects(target.targetKey, what, async (key) => {
          if (key === root) throw new FsError('FS_INVALID_ARGUMENT', `${what}: it is the root`);
          let dir: DirAnchor;
          try {
            dir = await openDir(key, root, mode);
          } catch (err) {
            const code = errnoOf(err);
            if (code === 'ENOENT') throw notFound(what);
            if (code === 'ENOTDIR') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
            throw err;
          }
          let parent: DirAnchor | undefined;
          try {
            parent = await openParent(key);
            checkRmdir(what, (await fsp.readdir(dir.self)).length, recursive);
            if (recursive) await removeTree(dir, what);
            if (parent === undefined) throw notFound(what);
            // rmdir never follows a link: a directory swapped for one is refused, not emptied.
            await fsp.rmdir(parent.child(posix.basename(key)));
            if (durable) await parent.handle.sync();
          } finally {
            await dir.close();
            await parent?.close();
          }
        }),
      );
    },

    rename(from, to, options) {
      const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
      return guard(what, () =>
        withRedirects(from.targetKey, what, (fromKey) =>
          withRedirects(to.targetKey, what, (toKey) => {
            const [first, second] = [fromKey, toKey].sort();
            const move = () => renameLocked(fromKey, toKey, options, what);
            return first === second ? lock.run(first!, move) : lock.run(first!, () => lock.run(second!, move));
          }),
        ),
      );
    },

    listDir(target, { stats }): Promise<FsDirEntry[]> {
      const what = `cannot list "${target.displayPath}"`;
      return guard(what, () =>
        withRedirects(target.targetKey, what, async (key) => {
          let anchor: DirAnchor;
          try {
            anchor = await openDir(key, root, mode);
          } catch (err) {
            const code = errnoOf(err);
            if (code === 'ENOENT') throw notFound(what);
            if (code === 'ENOTDIR') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
            throw err;
          }
          try {
            const entries: FsDirEntry[] = [];
            if (stats === false) {
              // The listing's own types; only links need a look (where they lead).
              const dirents = (await fsp.readdir(anchor.self, { withFileTypes: true })).filter((d) => !isTempName(d.name));
              dirents.sort((a, b) => compareNames(a.name, b.name));
              for (const d of dirents) {
                if (d.isFile() || d.isDirectory()) {
                  entries.push({ name: d.name, type: d.isFile() ? 'file' : 'directory', target: childTarget(key, target.displayPath, d.name) });
                  continue;
                }
                const entry = await describeEntry(anchor, key, d.name, target.displayPath);
                if (entry !== undefined) entries.push(entry);
              }
              return entries;
            }
            const names = await listNames(anchor);
            for (let i = 0; i < names.length; i++) {
              // Synchronous lstats would otherwise hold the event loop for a whole large directory.
              if (i > 0 && i % LIST_YIELD_EVERY === 0) await new Promise((done) => setImmediate(done));
              const entry = await describeEntry(anchor, key, names[i]!, target.displayPath);
              if (entry !== undefined) entries.push(entry);
            }
            return entries;
          } finally {
            await anchor.close();
          }
        }),
      );
    },

    /**
     * D4 natively: each directory is opened once through the anchored openDir (its real path
     * checked against the root on the descriptor), its entries read with their types through that
     * descriptor, and only what needs it is lstat'ed (files for their size, links to follow them);
     * a subdirectory is never lstat'ed. A directory swapped for a link after it was listed fails
     * openDir's check like any other access (outside the root: FS_OUTSIDE_ROOT; elsewhere: moved).
     */
    async *walk(target, { signal, prune, onUnreadable, wantsStats }): AsyncGenerator<FsWalkEntry> {
      const what = `cannot walk "${target.displayPath}"`;
      const listed = async (key: string, displayDir: string, prefix: string): Promise<FsWalkEntry[]> => {
        throwIfAborted(signal, what);
        const anchor = syncWalk ? openDirSync(key, root) : await openDir(key, root, mode);
        try {
          const dirents = (syncWalk ? readdirSync(anchor.self, { withFileTypes: true }) : await fsp.readdir(anchor.self, { withFileTypes: true })).filter(
            (d) => !isTempName(d.name),
          );
          dirents.sort((a, b) => compareNames(a.name, b.name));
          const out: FsWalkEntry[] = [];
          for (const d of dirents) {
            const name = d.name;
            const path = prefix === '' ? name : `${prefix}/${name}`;
            if (d.isDirectory() || d.isFile()) {
              const target = childTarget(key, displayDir, name);
              if (d.isDirectory() || wantsStats?.(path, name) === false) {
                out.push({ name, type: d.isDirectory() ? 'directory' : 'file', target, path });
                continue;
              }
            }
            const entry = await describeEntry(anchor, key, name, displayDir);
            if (entry !== undefined) out.push({ ...entry, path });
          }
          return out;
        } finally {
          await anchor.close();
        }
      };
      let top: { key: string; entries: FsWalkEntry[] };
      try {
        top = await withRedirects(target.targetKey, what, async (key) => ({ key, entries: await listed(key, target.displayPath, '') }));
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ENOENT') throw notFound(what);
        if (code === 'ENOTDIR') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
        throw mapError(err, what);
      }
      const stack = [{ entries: top.entries, next: 0 }];
      while (stack.length > 0) {
        const frame = stack[stack.length - 1]!;
        const entry = frame.entries[frame.next++];
        if (entry === undefined) {
          stack.pop();
          continue;
        }
        yield entry;
        if (entry.type !== 'directory') continue;
        // A real subdirectory: its key is the lexical one (a link's is where it leads).
        const dirKey = top.key === '/' ? `/${entry.path}` : `${top.key}/${entry.path}`;
        if (entry.target.targetKey !== dirKey || prune?.(entry) === true) continue;
        let entries: FsWalkEntry[];
        try {
          entries = await listed(dirKey, entry.target.displayPath, entry.path);
        } catch (err) {
          const error = mapError(err, `cannot list "${entry.target.displayPath}"`);
          if (onUnreadable === undefined || error.code === 'FS_ABORTED') throw error;
          onUnreadable(entry, error);
          continue;
        }
        stack.push({ entries, next: 0 });
      }
    },

    sweepTemps(sweep: SweepOptions = {}): Promise<string[]> {
      const olderThanMs = sweep.olderThanMs ?? 10 * 60 * 1000;
      return guard('cannot sweep temp files', async () => {
        if (typeof olderThanMs !== 'number' || Number.isNaN(olderThanMs)) {
          throw new FsError('FS_INVALID_ARGUMENT', `olderThanMs must be a number, got ${String(olderThanMs)}`);
        }
        const cutoff = clock() - BigInt(Math.round(olderThanMs * 1e6));
        const removed: string[] = [];
        const pending = [root];
        while (pending.length > 0) {
          const dir = pending.pop()!;
          let anchor: DirAnchor;
          try {
            anchor = await openDir(dir, root, mode);
          } catch (err) {
            // Gone, swapped for a link, or unreadable: nothing of ours can be swept there.
            if (isAbsent(err) || err instanceof Moved || errnoOf(err) === 'EACCES' || (err instanceof FsError && err.code === 'FS_OUTSIDE_ROOT')) continue;
            throw err;
          }
          try {
            for (const entry of await fsp.readdir(anchor.self, { withFileTypes: true })) {
              if (entry.isDirectory()) pending.push(posix.join(dir, entry.name));
              else if (entry.isFile() && isTempName(entry.name)) {
                const st = await fsp.lstat(anchor.child(entry.name), { bigint: true }).catch(() => undefined);
                if (st?.isFile() && st.mtimeNs < cutoff) {
                  await fsp.unlink(anchor.child(entry.name)).catch(ignoreErrno('ENOENT'));
                  removed.push(posix.join(dir, entry.name));
                }
              }
            }
          } finally {
            await anchor.close();
          }
        }
        return removed.sort(compareNames);
      });
    },
  };

  async function describeEntry(anchor: Pick<DirAnchor, 'child'>, dirKey: string, name: string, displayDir: string): Promise<FsDirEntry | undefined> {
    const displayPath = posix.join(displayDir, name);
    const lexical = posix.join(dirKey, name);
    let st: BigIntStats;
    try {
      st = entryLstat ? entryLstat(anchor.child(name)) : await fsp.lstat(anchor.child(name), { bigint: true });
    } catch (err) {
      if (isAbsent(err)) return undefined;
      throw err;
    }
    if (!st.isSymbolicLink()) return entryOf(name, lexical, displayPath, st);
    let key: string;
    try {
      key = await resolveKey(lexical);
    } catch (err) {
      // A link that leaves the root (or loops) is listed, never followed.
      if (err instanceof FsError) return { name, type: 'other', target: { targetKey: FsTargetKey(lexical), displayPath } };
      throw err;
    }
    let target: BigIntStats | undefined;
    if (key === root) target = await fsp.lstat(root, { bigint: true });
    else {
      // A link into a missing directory has no parent to open: it dangles, listed as `other`.
      const parent = await openParent(key).catch(() => undefined);
      try {
        target = parent && (await fsp.lstat(parent.child(posix.basename(key)), { bigint: true }).catch(() => undefined));
      } finally {
        await parent?.close();
      }
    }
    if (target === undefined || target.isSymbolicLink()) return { name, type: 'other', target: { targetKey: FsTargetKey(key), displayPath } };
    return entryOf(name, key, displayPath, target);
  }

  return provider;
}

/** Directories fsynced at once by flush. */
const FLUSH_CONCURRENCY = 8;

/** A swap's expectation failed at publication: another writer got there after the check. */
class Mismatch extends Error {}

function entryOf(name: string, key: string, displayPath: string, st: BigIntStats): FsDirEntry {
  const type = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other';
  return {
    name,
    type,
    target: { targetKey: FsTargetKey(key), displayPath },
    ...(type === 'file' ? { size: Number(st.size), executable: isExecutableMode(st.mode) } : {}),
    mtimeMs: msOf(st),
  };
}

/** The target of the entry `name` of a listed directory (no path walk: `name` is one segment). */
function childTarget(dirKey: string, displayDir: string, name: string): FsTarget {
  const targetKey = FsTargetKey(dirKey === '/' ? `/${name}` : `${dirKey}/${name}`);
  const displayPath = displayDir.startsWith('/') ? (displayDir === '/' ? `/${name}` : `${displayDir}/${name}`) : posix.join(displayDir, name);
  return { targetKey, displayPath };
}

/** Informational only (search orders by it); versions never look at timestamps. */
function msOf(st: BigIntStats): number {
  return Number(st.mtimeNs / 1_000_000n);
}

/** cwd: relative to the root, or absolute inside it (also inside the root as given, before realpath). */
function rootCwd(input: string | undefined, given: string, root: string): string {
  if (input === undefined) return root;
  let cwd = canonicalPath(input, root);
  if (!isWithin(root, cwd) && given !== root && isWithin(given, cwd)) {
    cwd = posix.join(root, posix.relative(given, cwd));
  }
  if (!isWithin(root, cwd)) throw new FsError('FS_OUTSIDE_ROOT', `cwd "${input}" is outside the root "${root}"`);
  return cwd;
}

function errnoOf(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function isAbsent(err: unknown): boolean {
  const code = errnoOf(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function ignoreErrno(...codes: string[]) {
  return (err: unknown): void => {
    if (!codes.includes(errnoOf(err) ?? '')) throw err;
  };
}

function kindOf(st: BigIntStats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

function notRegular(what: string, st: BigIntStats): FsError {
  return new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file (${kindOf(st)})`);
}

function notFound(what: string): FsError {
  return new FsError('FS_NOT_FOUND', `${what}: not found`);
}

function tooLarge(what: string, size: bigint | undefined, maxBytes: number): FsError {
  const detail = size === undefined ? 'the file holds more than' : `${size} bytes exceeds`;
  return new FsError('FS_TOO_LARGE', `${what}: ${detail} the ${maxBytes}-byte limit`);
}

function mapError(err: unknown, what: string): FsError {
  if (err instanceof Moved) {
    return new FsError('FS_IO_ERROR', `${what}: the path changed while in use; resolve it again`, { cause: err });
  }
  const code = errnoOf(err);
  if (code === 'ENXIO') return new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file (ENXIO)`, { cause: err });
  return toFsError(err, what);
}
