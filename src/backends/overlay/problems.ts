import type { FsErrorCode } from '../../seam/index.js';

/** A file a commit could not apply: a conflict with the lower, or a failure. */
export interface OverlayCommitProblem {
  readonly path: string;
  readonly code: FsErrorCode;
  readonly message: string;
}

export function conflict(path: string, message: string): OverlayCommitProblem {
  return { path, code: 'FS_CONFLICT', message };
}
