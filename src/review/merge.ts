import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { forkPair } from './fork-pair.js';
import type { UpperSnapshot } from '../backends/overlay/state.js';
import { runMerge, type MergeOptions, type MergeResult } from './merge-run.js';
import { changedKeys, lowerSides, sideAt } from './merge-sides.js';

export type { MergeOptions, MergeResult } from './merge-run.js';
export type { MergeConflict, MergeConflictKind } from './merge-plan.js';
export type { MergeRegion } from './merge-lines.js';

/**
 * Three-way merge of `fork` into `parent`, per path, against the fork's base (the parent's view at
 * the fork). One side changed: that side; both: a line-level merge of text; anything else that
 * collides is a conflict. By default all or nothing: with any conflict nothing changes. The result
 * is published to `parent` as one guarded change. See docs/merge.md.
 */
export async function merge(parent: OverlayFileSystem, fork: OverlayFileSystem, options: MergeOptions = {}): Promise<MergeResult> {
  const { parentState: ours, forkState: theirs, base } = await forkPair(parent, fork, 'merge');
  const parentNow = ours.snapshot();
  const forkNow = theirs.snapshot();
  // Only where the fork changed something can the merge change the parent.
  const keys = new Set<string>();
  changedKeys(base, forkNow, keys);
  const lowerAt = lowerSides(parent.lower, options.signal);
  const read = (layer: UpperSnapshot) => (key: string) => sideAt(lowerAt, layer, key);
  // After a failed guard: the parent as it is now, the lower read afresh.
  const current = (key: string) => sideAt(lowerSides(parent.lower, options.signal), ours.snapshot(), key);
  return runMerge(parent, keys, { base: read(base), ours: read(parentNow), theirs: read(forkNow), current }, options);
}
