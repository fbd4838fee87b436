import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { FsError } from '../seam/index.js';
import { decide } from './decide.js';
import { sandboxFeedback } from './feedback.js';
import { coreOf, collect } from './files.js';
import { decideAgainstParent } from './parent-decide.js';
import { collectAgainstParent } from './parent.js';
import type { OpenReviewOptions, Review, ReviewDecision, ReviewFile } from './types.js';

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
 * With `againstParent` and `parent`, a fork is reviewed against the sandbox it was forked from.
 */
export function openReview(sandbox: OverlayFileSystem, options: OpenReviewOptions = {}): Review {
  coreOf(sandbox);
  const parent = parentOf(options);
  const feedback = options.feedback ?? sandboxFeedback(sandbox);
  const collected = async () => (parent ? (await collectAgainstParent(parent, sandbox)).files : await collect(sandbox));
  const decided = (decisions: readonly ReviewDecision[]) => (parent ? decideAgainstParent(parent, sandbox, feedback, decisions) : decide(sandbox, feedback, decisions));
  const review: Review = {
    async files(paths?: readonly string[]): Promise<ReviewFile[]> {
      const all = (await collected()).map((c) => stripped(c.file));
      if (paths === undefined) return all;
      const roots = paths.map((p) => p.replace(/^\.\/+|\/+$/g, ''));
      return all.filter((f) => roots.some((r) => r === '' || r === '.' || f.path === r || f.path.startsWith(`${r}/`)));
    },
    decide: decided,
    accept: (ids) => decided(idsOf(ids).map((id) => ({ id, decision: 'accept' }))),
    reject: (ids, reason) => decided(idsOf(ids).map((id) => ({ id, decision: 'reject', ...(reason === undefined ? {} : { reason }) }))),
    pendingFeedback: () => Promise.resolve(feedback.pending()),
    watch(listener) {
      // Against the parent, a change of either side changes the review.
      const stops = [sandbox, ...(parent ? [parent] : [])].map((fs) => watchOne(fs, listener));
      return () => stops.forEach((stop) => stop());
    },
  };
  return review;
}

function parentOf(options: OpenReviewOptions): OverlayFileSystem | undefined {
  if (options.againstParent !== true) {
    if (options.parent !== undefined) throw new FsError('FS_INVALID_ARGUMENT', 'parent goes with againstParent: true');
    return undefined;
  }
  if (options.parent === undefined) throw new FsError('FS_INVALID_ARGUMENT', 'a review against the parent needs the parent: openReview(fork, { againstParent: true, parent })');
  coreOf(options.parent);
  return options.parent;
}

function watchOne(sandbox: OverlayFileSystem, listener: () => void): () => void {
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
}

function idsOf(ids: readonly string[]): readonly string[] {
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) throw new FsError('FS_INVALID_ARGUMENT', 'ids must be an array of strings');
  return ids;
}

/** A review file as callers see it: hunks without where they lie in the sides' lines. */
function stripped(file: ReviewFile): ReviewFile {
  return { ...file, hunks: file.hunks.map(({ id, oldStart, oldLines, newStart, newLines, lines }) => ({ id, oldStart, oldLines, newStart, newLines, lines })) };
}
