import { constants, lstatSync, realpathSync, statSync, promises as nodeFsp, type BigIntStats } from 'node:fs';
import { posix, resolve as resolveNative } from 'node:path';
import { FsError, toFsError } from '../../seam/errors.js';
import { canonicalPath, isWithin } from '../../seam/path.js';
import { KeyedMutex } from '../../seam/lock.js';
import { DirAnchor, hardenedOpenSupported, openDir, procAnchoringAvailable, type AnchorMode } from './anchor.js';
import { VersionCache, wallClockNs } from './version-cache.js';

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
   * How many helpers a search's reads of small files use (default 2 where the machine has two
   * cores or more, else 0; 0 reads them on the calling thread). Idle helpers stay for the next
   * search without keeping the process alive.
   */
  readonly searchThreads?: number;
  /**
   * What those helpers are (default `processes` where this process is node itself, else
   * `threads`): child processes each have a descriptor table of their own, which the reads'
   * opens and closes do not then share, and hold each directory as their working directory.
   */
  readonly searchHelpers?: 'processes' | 'threads';
  /**
   * Whether a search's bulk reads pin each file with O_PATH before opening it, as single reads
   * always do, so that a special file swapped in at a listed name is never opened at all (default
   * false: the file is opened non-blocking without following a link, and anything but a regular
   * file is closed unread; two system calls fewer per file). See docs/local.md.
   */
  readonly pinSearchReads?: boolean;
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

export const O_NOFOLLOW = constants.O_NOFOLLOW;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
export const LEAF_READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
/**
 * Linux's O_PATH, which node does not export: 010000000 on the architectures whose fcntl flags
 * follow asm-generic (alpha, parisc and sparc differ; they keep the check by name).
 */
export const O_PATH =
  process.platform === 'linux' && ['x64', 'arm64', 'arm', 'ia32', 'riscv64', 'loong64', 's390x', 'ppc64'].includes(process.arch)
    ? 0o10000000
    : undefined;

/** What every part of the local provider shares: the root, how it is anchored, the cache and lock. */
export interface LocalContext {
  /** The canonical root. */
  readonly root: string;
  readonly cwd: string;
  readonly mode: AnchorMode;
  readonly fsp: LocalIo;
  readonly durable: boolean;
  readonly clock: () => bigint;
  readonly racyWindowNs: bigint;
  readonly cache: VersionCache;
  readonly lock: KeyedMutex;
  /** Running as root: a replaced file's owner is copied onto its successor. */
  readonly isRoot: boolean;
  /** Walks and small unversioned reads use synchronous calls (see createContext). */
  readonly syncWalk: boolean;
  /** A synchronous lstat for listDir's entries, or undefined to use `fsp`. */
  readonly entryLstat: ((path: string) => BigIntStats) | undefined;
  /** The anchored openDir, confined to the root, through `fsp`. */
  openDir(dir: string): Promise<DirAnchor>;
}

/** Checks the options and builds the context (the root canonicalised once, here). */
export function createContext(options: LocalProviderOptions): LocalContext {
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
  const mode = anchorMode(options.anchoring ?? 'auto');

  const fsp: LocalIo = options.io ?? nodeFsp;
  // listDir lstats its entries synchronously (through the same anchored paths): an async lstat is
  // a thread-pool round trip each, which made a listing 60-100x readdir. An injected io keeps the
  // async calls, so that every call still goes through it.
  const entryLstat = options.io === undefined ? (path: string) => lstatSync(path, { bigint: true }) : undefined;
  // A walk opens and lists each directory with synchronous calls for the same reason (the checks
  // are openDir's); not with an injected io, nor where descriptors cannot be pinned through /proc.
  const syncWalk = options.io === undefined && mode === 'proc' && O_PATH !== undefined;
  const clock = options.clock ?? wallClockNs;
  const racyWindowMs = options.racyWindowMs ?? 2000;
  if (typeof racyWindowMs !== 'number' || !Number.isFinite(racyWindowMs) || racyWindowMs < 0) {
    throw new FsError('FS_INVALID_ARGUMENT', `racyWindowMs must be a non-negative number, got ${String(racyWindowMs)}`);
  }
  const racyWindowNs = BigInt(Math.round(racyWindowMs * 1e6));
  return {
    root,
    cwd,
    mode,
    fsp,
    durable: options.durable ?? true,
    clock,
    racyWindowNs,
    cache: new VersionCache({ now: clock, racyWindowNs }),
    lock: new KeyedMutex(),
    isRoot: typeof process.getuid === 'function' && process.getuid() === 0,
    syncWalk,
    entryLstat,
    openDir: (dir) => openDir(dir, root, mode, fsp),
  };
}

function anchorMode(requested: 'auto' | AnchorMode): AnchorMode {
  let mode: AnchorMode;
  if (requested === 'auto') mode = procAnchoringAvailable() ? 'proc' : 'inode';
  else if (requested === 'proc' || requested === 'inode') mode = requested;
  else throw new FsError('FS_INVALID_ARGUMENT', `unknown anchoring mode ${JSON.stringify(requested)}`);
  if (mode === 'proc' && !procAnchoringAvailable()) {
    throw new FsError('FS_INVALID_ARGUMENT', 'anchoring "proc" needs a Linux /proc that reports descriptor paths');
  }
  return mode;
}

/** cwd: relative to the root, or absolute inside it (also inside the root as given, before realpath). */
function rootCwd(input: string | undefined, given: string, root: string): string {
  if (input === undefined) return root;
  let cwd = canonicalPath(input, root);
  if (!isWithin(root, cwd) && given !== root && isWithin(given, cwd)) {
    cwd = posix.join(root, posix.relative(given, cwd));
  }
  return cwd; // one outside the root is refused by the seam, as for every backend
}
