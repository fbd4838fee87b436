import type { OverlayFileSystem } from '../backends/overlay/index.js';

/**
 * The review model: a sandbox's changes as files and hunks, each with a stable id, and the
 * decisions a reviewer takes on them. The CLI, MCP and the review page only present it.
 */

export interface ReviewHunk {
  /** Stable: derived from the path and the hunk's content (not its line numbers). */
  readonly id: string;
  readonly oldStart: number;
  readonly oldLines: number;
  readonly newStart: number;
  readonly newLines: number;
  /** Unified-diff lines with their '+', '-', ' ' prefixes (no trailing newline). */
  readonly lines: readonly string[];
}

export interface ReviewFile {
  /** Relative to the project root, '/'-separated. */
  readonly path: string;
  /** A rename is a delete plus an add. */
  readonly status: 'added' | 'modified' | 'deleted';
  readonly kind: 'text' | 'binary' | 'symlink' | 'mode' | 'directory';
  /** The whole-file decision's id (every file has one). */
  readonly id: string;
  /** Empty where there are no lines (binary, symlink, mode only). */
  readonly hunks: readonly ReviewHunk[];
}

export interface ReviewConflict {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

export interface ReviewDecision {
  readonly id: string;
  readonly decision: 'accept' | 'reject';
  readonly reason?: string;
}

export interface ReviewResult {
  /** Ids published to the folder (or the parent). */
  readonly accepted: readonly string[];
  /** Ids reverted in the sandbox. */
  readonly rejected: readonly string[];
  /** Accepted hunks whose file changed in the folder (or the parent) meanwhile: nothing written for that file. */
  readonly conflicts: readonly ReviewConflict[];
}

export interface ReviewFeedback {
  readonly path: string;
  /** The lines the rejected hunk covered in the agent's file, e.g. '12-15' or '12'. */
  readonly lines: string;
  readonly reason: string;
  readonly id: string;
}

export interface Review {
  files(paths?: readonly string[]): Promise<ReviewFile[]>;
  /** Applies all decisions as ONE change (one checkpoint). Unknown or stale ids: FsError 'FS_STALE_VERSION' naming them, nothing applied. */
  decide(decisions: readonly ReviewDecision[]): Promise<ReviewResult>;
  /** decide() with accept for each. */
  accept(ids: readonly string[]): Promise<ReviewResult>;
  /** decide() with reject for each. */
  reject(ids: readonly string[], reason?: string): Promise<ReviewResult>;
  /** Reasons of rejected hunks not yet handed to the agent. */
  pendingFeedback(): Promise<readonly ReviewFeedback[]>;
  /** Calls `listener` after any change of the sandbox (for live views); returns the unsubscribe. */
  watch(listener: () => void): () => void;
}

export interface OpenReviewOptions {
  /**
   * Review a fork against its parent (`parent`, required then) instead of the lower: the parent's
   * view now against the fork's, where the fork changed something; accepted hunks go to the parent.
   */
  readonly againstParent?: boolean;
  /** The sandbox the fork was forked from (with `againstParent`). */
  readonly parent?: OverlayFileSystem;
  /** Where the reasons of rejected hunks wait for the agent (default: `sandboxFeedback(sandbox)`, in memory). */
  readonly feedback?: FeedbackStore;
}

/** Where reasons of rejected hunks wait until the agent is told. A store in a database answers with promises. */
export interface FeedbackStore {
  add(items: readonly ReviewFeedback[]): void | Promise<void>;
  /** What waits, oldest first. */
  pending(): readonly ReviewFeedback[] | Promise<readonly ReviewFeedback[]>;
  /** What waits, removed: it is handed over once. */
  take(): readonly ReviewFeedback[] | Promise<readonly ReviewFeedback[]>;
}
