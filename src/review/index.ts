// Combining work: three-way merge of a fork into its parent (see docs/merge.md).
export { merge, type MergeConflict, type MergeConflictKind, type MergeOptions, type MergeRegion, type MergeResult } from './merge.js';
export { conflicted, holdsMarkers, resolveMarkers } from './merge-markers.js';
export { sync } from './sync.js';
