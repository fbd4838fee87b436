import type { FsOpOptions, FsVersion } from '../../seam/index.js';
import type { OverlayCommitProblem } from './problems.js';

export type OverlayChangeKind = 'added' | 'modified' | 'deleted' | 'renamed';

/**
 * Why a change is counted, not listed, and left out of a commit unless `includeIgnored`:
 * `gitignore`, the project's ignore rules exclude it; `git`, it is one of git's own files (`.git/`).
 */
export type OverlayIgnoredReason = 'gitignore' | 'git';

export interface OverlayChange {
  /** The canonical path (its target key in the lower); for a rename, the new name. */
  readonly path: string;
  /**
   * Files: added, modified, deleted, or renamed (moved from `from`, possibly also edited).
   * Directories: added (an empty directory made in the overlay), deleted (a lower directory
   * removed), modified (a lower directory removed and made again: its lower contents go).
   */
  readonly kind: OverlayChangeKind;
  /** `link`: a symbolic link made, replaced or removed in the overlay (K1, K2). */
  readonly type?: 'file' | 'directory' | 'link';
  /** For `renamed`: the path the file was moved from (in the lower). */
  readonly from?: string;
  /**
   * The lower's version when the overlay first changed this path; undefined when the lower had
   * no file there. Commit writes only if the lower still has this version.
   */
  readonly baseVersion: FsVersion | undefined;
  /** The overlay's version of the file (added, modified, renamed). */
  readonly version?: FsVersion;
  readonly size?: number;
  /** Files the overlay holds (added, modified, renamed): true when the file is executable (X1). */
  readonly executable?: boolean;
  /** Links the overlay holds (added, modified): the link's text. */
  readonly linkText?: string;
  /** Set when the change is an ignored output or one of git's files (see `OverlayIgnoredReason`). */
  readonly ignored?: OverlayIgnoredReason;
}

export interface OverlayCommitResult {
  /** Paths now in the lower; they left the upper layer. */
  readonly committed: string[];
  /** Those of `committed` that replaced a lower file changed since the overlay first saw it (`force`). */
  readonly overwritten: string[];
  /** Paths whose lower file changed since the overlay first saw it (FS_CONFLICT); the lower was not touched. */
  readonly conflicts: OverlayCommitProblem[];
  /** Paths that failed for another reason (permissions, I/O, a parent that is not a directory...). */
  readonly failed: OverlayCommitProblem[];
}

export interface OverlayCommitProgress {
  readonly path: string;
  /** 1-based position of this path among those being committed. */
  readonly index: number;
  readonly total: number;
  readonly outcome: 'committed' | 'conflict' | 'failed';
}

export interface OverlayCommitOptions extends FsOpOptions {
  onProgress?(progress: OverlayCommitProgress): void;
  /**
   * Commit conflicting paths too, replacing (or removing) what the lower holds now: for after a
   * person has looked at the conflict. A path that now leads elsewhere in the lower (through a
   * symlink) is still refused.
   */
  readonly force?: boolean;
  /**
   * Commit ignored changes too (ignored outputs and git's files). Git's files then go whole or
   * not at all: one that changed in the lower meanwhile makes every one a conflict.
   */
  readonly includeIgnored?: boolean;
}
