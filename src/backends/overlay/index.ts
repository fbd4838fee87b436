import {
  FsError,
  KeyedMutex,
  createFs,
  type CreateFsOptions,
  type FileSystem,
  type FsOpOptions,
  type FsProvider,
} from '../../seam/index.js';
import { createOverlayProvider } from './provider.js';
import {
  createReview,
  type OverlayChange,
  type OverlayCommitOptions,
  type OverlayCommitResult,
} from './review.js';
import { UpperState, type UpperTuning } from './state.js';
import { fsStore, openDirStore, type UpperStore } from './store.js';

export type {
  OverlayChange,
  OverlayChangeKind,
  OverlayCommitOptions,
  OverlayCommitProblem,
  OverlayCommitProgress,
  OverlayCommitResult,
} from './review.js';
export { fileDiff, renameDiff } from './review.js';
export { STATE_FORMAT, STATE_FORMAT_VERSION } from './state.js';
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
  /** The files the overlay holds that differ from the lower as it first saw them, sorted by path. */
  changes(paths?: readonly string[], options?: FsOpOptions): Promise<OverlayChange[]>;
  /** A git-style unified diff from the lower as it is now to the overlay view. */
  diff(paths?: readonly string[], options?: FsOpOptions): Promise<string>;
  /**
   * Write the changes (all, or those at or beneath `paths`) to the lower, each guarded by its base
   * version. A path whose lower file changed underneath is reported as a conflict and not
   * written. Committed paths leave the upper layer; the overlay view is unchanged.
   */
  commit(paths?: readonly string[], options?: OverlayCommitOptions): Promise<OverlayCommitResult>;
  /** Drop the changes (all, or those at or beneath `paths`): those paths show the lower again. */
  discard(paths?: readonly string[], options?: FsOpOptions): Promise<void>;
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

/**
 * @internal An overlay over `options.lower` whose upper is kept in `store` (or in memory). Tests
 * give it stores that fail or crash, and a small compaction threshold.
 */
export async function composeOverlay(options: CreateFsOptions & { readonly lower: FileSystem }, store: UpperStore | undefined, tuning?: UpperTuning): Promise<OverlayFileSystem> {
  const { lower } = options;
  const rootKey = (await lower.resolve(lower.root ?? '/')).targetKey;
  const state = await UpperState.open(rootKey, store, tuning);
  const core = { lower, state, rootKey, lock: new KeyedMutex() };
  const provider = createOverlayProvider(core);
  const fs = createFs(provider, options);
  const review = createReview(core, fs);
  return Object.assign(fs, { lower, provider, ...review });
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
