import { FsError, type CreateFsOptions, type FileSystem, type FsOpOptions, type FsProvider } from '../../seam/index.js';
import { composeOverlay } from './compose.js';
import type { OverlayChange, OverlayCommitOptions, OverlayCommitResult } from './review.js';
import { fsStore, openDirStore, type UpperStore } from './store.js';

export type {
  OverlayChange,
  OverlayChangeKind,
  OverlayCommitOptions,
  OverlayCommitProblem,
  OverlayCommitProgress,
  OverlayCommitResult,
} from './review.js';
export type { UpperStore } from './store.js';

export interface OverlayFsOptions extends CreateFsOptions {
  /** The filesystem the overlay reads through to. It is only written by `commit`. */
  readonly lower: FileSystem;
  /**
   * Keep the upper layer (file contents, whiteouts, base versions) in this filesystem, under its
   * cwd, so the sandbox can be reopened. Default: in memory only. Not together with `stateDir`.
   */
  readonly upper?: FileSystem;
  /**
   * Keep the upper layer in this host directory (created if missing), so the sandbox survives a
   * restart and another process can review it. Default: in memory only.
   */
  readonly stateDir?: string;
  /**
   * Keep the upper layer in this store (e.g. `createPostgresUpperStore` of `dsh-fs/postgres`).
   * Not together with `upper` or `stateDir`.
   */
  readonly store?: UpperStore;
}

/** A copy-on-write view of `lower`: every mutation lands in the upper layer until it is committed. */
export interface OverlayFileSystem extends FileSystem {
  readonly lower: FileSystem;
  /** The overlay's storage provider (SPI v2), as `fs.provider` of the memory and local filesystems. */
  readonly provider: FsProvider;
  /**
   * The files the overlay holds that differ from the lower as it first saw them, sorted by path.
   * With `against: 'parent'`, those where this fork's view differs from its parent's view at the
   * fork instead (for an overlay that is no fork: from the lower).
   */
  changes(paths?: readonly string[], options?: OverlayReviewOptions): Promise<OverlayChange[]>;
  /** A git-style unified diff from the lower as it is now (or the parent at the fork) to the overlay view. */
  diff(paths?: readonly string[], options?: OverlayReviewOptions): Promise<string>;
  /**
   * A new overlay over the same lower that starts with this overlay's exact view, in constant time
   * and memory however many files either holds; from then on writes to one do not show in the
   * other. With `stateDir` (this overlay must be kept in a state directory), the fork is kept in
   * that new directory, which shares this one's saved state rather than copying it. See
   * docs/overlay.md, "Forks".
   */
  fork(options?: OverlayForkOptions): Promise<OverlayFileSystem>;
  /**
   * Replaces this overlay's view with `fork`'s (any overlay over the same lower, typically a fork
   * of this one): keep the winner, then commit as usual. Call it while neither is being written.
   */
  adopt(fork: OverlayFileSystem, options?: FsOpOptions): Promise<void>;
  /**
   * Write the changes (all, or those at or beneath `paths`) to the lower, each guarded by its base
   * version. A path whose lower file changed underneath is reported as a conflict and not
   * written. Committed paths leave the upper layer; the overlay view is unchanged.
   */
  commit(paths?: readonly string[], options?: OverlayCommitOptions): Promise<OverlayCommitResult>;
  /** Drop the changes (all, or those at or beneath `paths`): those paths show the lower again. */
  discard(paths?: readonly string[], options?: FsOpOptions): Promise<void>;
}

export interface OverlayReviewOptions extends FsOpOptions {
  /**
   * `lower` (default): against the lower, what commit would do. `parent`: against this fork's
   * parent as it was at the fork, what this attempt did differently (renames show as a removal
   * and an addition there).
   */
  readonly against?: 'lower' | 'parent';
}

export interface OverlayForkOptions {
  /** Keep the fork in this new (absent or empty) host directory; see `fork`. Default: in memory. */
  readonly stateDir?: string;
}

/**
 * Creates a copy-on-write overlay over any `FileSystem`. Reads fall through to the lower unless
 * the upper holds the file or a whiteout; writes, edits and removes never touch the lower.
 */
export async function createOverlayFs(options: OverlayFsOptions): Promise<OverlayFileSystem> {
  const { lower, upper, stateDir, store: given } = options;
  if (!isFileSystem(lower)) throw new FsError('FS_INVALID_ARGUMENT', 'lower must be a FileSystem');
  if (upper !== undefined && !isFileSystem(upper)) throw new FsError('FS_INVALID_ARGUMENT', 'upper must be a FileSystem');
  if (upper === lower) throw new FsError('FS_INVALID_ARGUMENT', 'upper must not be the lower filesystem: the lower is only written by commit');
  if (upper !== undefined && stateDir !== undefined) {
    throw new FsError('FS_INVALID_ARGUMENT', 'give either upper or stateDir, not both');
  }
  if (stateDir !== undefined && (typeof stateDir !== 'string' || stateDir.length === 0)) {
    throw new FsError('FS_INVALID_ARGUMENT', 'stateDir must be a non-empty path');
  }
  if (given !== undefined) {
    if (typeof given?.readState !== 'function' || typeof given.appendJournal !== 'function') {
      throw new FsError('FS_INVALID_ARGUMENT', 'store must be an UpperStore');
    }
    if (upper !== undefined || stateDir !== undefined) throw new FsError('FS_INVALID_ARGUMENT', 'give one of upper, stateDir and store');
  }
  let store: UpperStore | undefined = given;
  if (stateDir !== undefined) store = await openDirStore(stateDir);
  else if (upper !== undefined) store = fsStore(upper);
  return composeOverlay(options, store);
}

function isFileSystem(value: unknown): value is FileSystem {
  const v = value as Partial<FileSystem> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.resolve === 'function' &&
    typeof v.stat === 'function' &&
    typeof v.readBytes === 'function' &&
    typeof v.writeBytes === 'function' &&
    typeof v.listDir === 'function' &&
    typeof v.remove === 'function'
  );
}
