import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { FsError } from '../seam/index.js';
import type { OpenReviewOptions, Review } from './types.js';

export type {
  OpenReviewOptions,
  Review,
  ReviewConflict,
  ReviewDecision,
  ReviewFeedback,
  ReviewFile,
  ReviewHunk,
  ReviewResult,
} from './types.js';

/** Opens the review of a sandbox (an overlay): its changes as files and hunks, and the decisions on them. */
export function openReview(sandbox: OverlayFileSystem, options: OpenReviewOptions = {}): Review {
  void sandbox;
  void options;
  throw new FsError('FS_UNSUPPORTED', 'review: not implemented yet');
}
