import type { FileSystem, FsOpOptions, FsProvider } from '../../seam/index.js';
import type { OverlayChange, OverlayCommitOptions, OverlayCommitResult } from './review.js';

/** Who or what made a change (free text, both optional): kept on its checkpoint. */
export interface OverlayCheckpointLabel {
  readonly owner?: string;
  readonly source?: string;
}

/**
 * A checkpoint: the overlay as it was right after one change (see docs/history.md). `id` is a
 * positive integer, one more than the previous change's (never reused, also across reopening);
 * `time` is when the change was made (ms since the epoch); `paths` the target keys it changed.
 */
export interface OverlayCheckpoint extends OverlayCheckpointLabel {
  readonly id: number;
  readonly time: number;
  readonly paths: readonly string[];
}

/** A copy-on-write view of `lower`: every mutation lands in the upper layer until it is committed. */
export interface OverlayFileSystem extends FileSystem {
  readonly lower: FileSystem;
  /** The overlay's storage provider (SPI v2), as `fs.provider` of the memory and local filesystems. */
  readonly provider: FsProvider;
  /**
   * What opening it did about operations on the lower that a killed process left unfinished
   * (docs/overlay.md, "Crash-clean commit"); empty when there were none. Also given to `onRecovered`.
   */
  readonly recovered: readonly OverlayRecovery[];
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
  /** The checkpoints kept, oldest first: every change of the upper records one (docs/history.md). */
  checkpoints(): OverlayCheckpoint[];
  /**
   * Makes the view what it was at checkpoint `id` (with `paths`: at and below them only), as one
   * change, which records a checkpoint too. The lower is not touched. An id not kept is FS_NOT_FOUND.
   */
  rewind(id: number, options?: OverlayRewindOptions): Promise<void>;
  /** Runs `fn`; the checkpoint of every change made meanwhile carries `label` (the innermost, when nested). */
  label<T>(label: OverlayCheckpointLabel, fn: () => Promise<T>): Promise<T>;
}

export interface OverlayRewindOptions extends FsOpOptions {
  /** Rewind only these paths and what lies below them (default: everything). */
  readonly paths?: readonly string[];
}

export interface OverlayReviewOptions extends FsOpOptions {
  /**
   * `lower` (default): against the lower, what commit would do. `parent`: against this fork's
   * parent as it was at the fork, what this attempt did differently (renames show as a removal
   * and an addition there).
   */
  readonly against?: 'lower' | 'parent';
  /**
   * Compare checkpoint `from` with checkpoint `to` (default: the view now) instead: what changed
   * between them (not with `against`; renames show as a removal and an addition, as against the parent).
   */
  readonly from?: number;
  readonly to?: number;
  /**
   * `diff` against the lower: show ignored changes (ignored outputs, git's files) hunk by hunk too.
   * By default they are left out of the text; `changes` marks them (`ignored`) and `ignoredGroups`
   * counts them.
   */
  readonly includeIgnored?: boolean;
}

export interface OverlayForkOptions {
  /** Keep the fork in this new (absent or empty) host directory; see `fork`. Default: in memory. */
  readonly stateDir?: string;
}

/** What opening a sandbox did about an operation on its lower that a killed process left unfinished. */
export interface OverlayRecovery {
  /** What was unfinished: `commit`, or the kind another operation journals under. */
  readonly kind: string;
  /**
   * `finished`: this sandbox started it and ran it again to the end (`result`); `rolledBack`:
   * nobody can finish it (its sandbox was in memory, or its state directory is gone), so the
   * lower was put back as it was before it (`paths`); `left`: another sandbox's, still kept in
   * `owner`, which finishes it when opened; `failed`: finishing or rolling back failed (the
   * message says why), and the next open tries again.
   */
  readonly action: 'finished' | 'rolledBack' | 'left' | 'failed';
  /** The process that was running it, when known. */
  readonly pid: number | undefined;
  /** The state directory of the sandbox that started it. */
  readonly owner: string | undefined;
  /** With `finished`: the committed paths; with `rolledBack`: the lower paths put back. */
  readonly paths: readonly string[];
  /** With `finished`: the commit's result (conflicts with changes made since are reported there). */
  readonly result?: OverlayCommitResult;
  /** One line saying what happened, for a log or a terminal. */
  readonly message: string;
}
