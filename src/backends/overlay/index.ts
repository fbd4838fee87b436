import { realpath } from 'node:fs/promises';
import { FsError, type CreateFsOptions, type FileSystem } from '../../seam/index.js';
import { composeOverlay } from './compose.js';
import type { OverlayFileSystem } from './types.js';
import { fsStore, openDirStore, type UpperStore } from './store.js';
import { recoverLower, type OverlayRecovery } from './recover.js';

export type {
  OverlayChange,
  OverlayChangeKind,
  OverlayCommitOptions,
  OverlayCommitProblem,
  OverlayCommitProgress,
  OverlayCommitResult,
  OverlayIgnoredGroup,
  OverlayIgnoredReason,
} from './review.js';
export { ignoredGroups } from './review.js';
export type { UpperStore } from './store.js';
export type { OverlayRecovery } from './recover.js';
export type {
  OverlayCheckpoint,
  OverlayCheckpointLabel,
  OverlayFileSystem,
  OverlayForkOptions,
  OverlayReviewOptions,
  OverlayRewindOptions,
} from './types.js';

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
  /**
   * How many checkpoints to keep (every change of the upper records one; the oldest are dropped
   * first, with whatever blobs only they held). Default 1,000; 0 keeps none. See docs/history.md.
   */
  readonly keepCheckpoints?: number;
  /**
   * How many bytes of replaced contents the kept checkpoints may hold (what only they still refer
   * to); beyond it the oldest are dropped. Default 256 MiB (268,435,456). See docs/history.md.
   */
  readonly keepCheckpointBytes?: number;
  /**
   * Told of each operation on the lower that a killed process left unfinished, once it is
   * finished or rolled back on this open (also kept in `recovered`).
   */
  readonly onRecovered?: (recovery: OverlayRecovery) => void;
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
  const keep = options.keepCheckpoints;
  if (keep !== undefined && !(Number.isSafeInteger(keep) && keep >= 0)) {
    throw new FsError('FS_INVALID_ARGUMENT', 'keepCheckpoints must be a non-negative integer');
  }
  const bytes = options.keepCheckpointBytes;
  if (bytes !== undefined && !(typeof bytes === 'number' && bytes >= 0 && (Number.isSafeInteger(bytes) || bytes === Infinity))) {
    throw new FsError('FS_INVALID_ARGUMENT', 'keepCheckpointBytes must be a non-negative integer (or Infinity)');
  }
  if (options.onRecovered !== undefined && typeof options.onRecovered !== 'function') {
    throw new FsError('FS_INVALID_ARGUMENT', 'onRecovered must be a function');
  }
  let store: UpperStore | undefined = given;
  if (stateDir !== undefined) store = await openDirStore(stateDir);
  else if (upper !== undefined) store = fsStore(upper);
  const owner = stateDir === undefined ? undefined : await realpath(stateDir);
  const overlay = await composeOverlay(options, store, {}, owner);
  const recovered = await recoverLower(overlay, owner);
  (overlay.recovered as OverlayRecovery[]).push(...recovered);
  for (const r of recovered) options.onRecovered?.(r);
  return overlay;
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
