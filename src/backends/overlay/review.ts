import type { FileSystem, FsOpOptions } from '../../seam/index.js';
import { lazily } from '../../lazy.js';
import type { OverlayCore } from './core.js';
import { createReviewContext } from './review-context.js';
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
export { ignoredGroups, type OverlayIgnoredGroup } from './review-ignored-groups.js';

// Loaded by the first review call: opening a sandbox (a run, a tool call) needs none of it, nor the
// ignore rules and the diff package behind it.
const status = lazily(() => import('./review-status.js'));
const diffs = lazily(() => import('./review-diff.js'));
const commits = lazily(async () => ({ ...(await import('./review-commit.js')), ...(await import('./commit-markers.js')) }));
const discards = lazily(() => import('./review-discard.js'));

/** The overlay's review of its upper layer against the lower: list, diff, commit and discard changes. */
export function createReview(core: OverlayCore, view: FileSystem) {
  const ctx = createReviewContext(core, view);
  return {
    changes: async (paths?: readonly string[], options: FsOpOptions = {}): Promise<OverlayChange[]> => (await status()).changes(ctx, paths, options),
    diff: async (paths?: readonly string[], options: FsOpOptions & { readonly includeIgnored?: boolean } = {}): Promise<string> => (await diffs()).diff(ctx, paths, options),
    commit: async (paths?: readonly string[], options: OverlayCommitOptions = {}): Promise<OverlayCommitResult> => {
      const { commit, commitUnmarked } = await commits();
      return commitUnmarked(commit, ctx, paths, options);
    },
    discard: async (paths?: readonly string[], options: FsOpOptions = {}): Promise<void> => (await discards()).discard(ctx, paths, options),
  };
}
