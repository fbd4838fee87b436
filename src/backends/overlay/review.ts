import type { FileSystem, FsOpOptions } from '../../seam/index.js';
import type { OverlayCore } from './core.js';
import { createReviewContext } from './review-context.js';
import { changes } from './review-status.js';
import { diff } from './review-diff.js';
import { commit } from './review-commit.js';
import { commitUnmarked } from './commit-markers.js';
import { discard } from './review-discard.js';
import type { OverlayChange, OverlayCommitOptions, OverlayCommitResult } from './review-types.js';

export type {
  OverlayChange,
  OverlayChangeKind,
  OverlayCommitOptions,
  OverlayCommitProgress,
  OverlayCommitResult,
  OverlayIgnoredReason,
} from './review-types.js';
export type { OverlayCommitProblem } from './problems.js';
export { ignoredGroups, type OverlayIgnoredGroup } from './review-ignored.js';

/** The overlay's review of its upper layer against the lower: list, diff, commit and discard changes. */
export function createReview(core: OverlayCore, view: FileSystem) {
  const ctx = createReviewContext(core, view);
  return {
    changes: (paths?: readonly string[], options: FsOpOptions = {}): Promise<OverlayChange[]> => changes(ctx, paths, options),
    diff: (paths?: readonly string[], options: FsOpOptions & { readonly includeIgnored?: boolean } = {}): Promise<string> => diff(ctx, paths, options),
    commit: (paths?: readonly string[], options: OverlayCommitOptions = {}): Promise<OverlayCommitResult> => commitUnmarked(commit, ctx, paths, options),
    discard: (paths?: readonly string[], options: FsOpOptions = {}): Promise<void> => discard(ctx, paths, options),
  };
}
