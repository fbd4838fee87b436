import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { FsError } from '../seam/index.js';
import { decide } from './decide.js';
import { sandboxFeedback } from './feedback.js';
import { coreOf, collect } from './files.js';
import type { OpenReviewOptions, Review, ReviewFile } from './types.js';

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
export { dirFeedback, feedbackNote, memoryFeedback, sandboxFeedback, type FeedbackStore } from './feedback.js';
export { reviewNotes } from './notes.js';
// Combining work: three-way merge of a fork into its parent (see docs/merge.md).
export { merge, type MergeConflict, type MergeConflictKind, type MergeOptions, type MergeRegion, type MergeResult } from './merge.js';
export { conflicted, holdsMarkers, resolveMarkers } from './merge-markers.js';
export { sync } from './sync.js';

/**
 * Opens the review of a sandbox: its changes as files and hunks, and the decisions on them (see
 * docs/review.md). Feedback waits in `feedback` (default: kept with the sandbox object, in memory).
 */
export function openReview(sandbox: OverlayFileSystem, options: OpenReviewOptions = {}): Review {
  coreOf(sandbox);
  if (options.againstParent === true) throw new FsError('FS_UNSUPPORTED', 'a review against the parent (a fork) is not supported yet: review against the folder');
  const feedback = options.feedback ?? sandboxFeedback(sandbox);
  const review: Review = {
    async files(paths?: readonly string[]): Promise<ReviewFile[]> {
      const all = (await collect(sandbox)).map((c) => stripped(c.file));
      if (paths === undefined) return all;
      const roots = paths.map((p) => p.replace(/^\.\/+|\/+$/g, ''));
      return all.filter((f) => roots.some((r) => r === '' || r === '.' || f.path === r || f.path.startsWith(`${r}/`)));
    },
    decide: (decisions) => decide(sandbox, feedback, decisions),
    accept: (ids) => decide(sandbox, feedback, idsOf(ids).map((id) => ({ id, decision: 'accept' }))),
    reject: (ids, reason) => decide(sandbox, feedback, idsOf(ids).map((id) => ({ id, decision: 'reject', ...(reason === undefined ? {} : { reason }) }))),
    pendingFeedback: () => Promise.resolve(feedback.pending()),
    watch(listener) {
      const w = sandbox.watch?.();
      if (!w) return () => {};
      void (async () => {
        try {
          for await (const _ of w) listener();
        } catch {
          // The sandbox went away: no more changes to tell of.
        }
      })();
      return () => void w.return();
    },
  };
  return review;
}

function idsOf(ids: readonly string[]): readonly string[] {
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) throw new FsError('FS_INVALID_ARGUMENT', 'ids must be an array of strings');
  return ids;
}

/** A review file as callers see it: hunks without where they lie in the sides' lines. */
function stripped(file: ReviewFile): ReviewFile {
  return { ...file, hunks: file.hunks.map(({ id, oldStart, oldLines, newStart, newLines, lines }) => ({ id, oldStart, oldLines, newStart, newLines, lines })) };
}
