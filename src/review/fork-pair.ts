import { FsError, type FileSystem } from '../seam/index.js';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { upperStateOf } from '../backends/overlay/compose.js';
import type { UpperSnapshot, UpperState } from '../backends/overlay/state.js';

// A fork and the sandbox it was forked from, checked to be such a pair: merge and the review
// against the parent both read the same three layers over the shared lower.

export interface ForkPair {
  readonly parentState: UpperState;
  readonly forkState: UpperState;
  /** The parent's layer at the fork: what the fork took the parent to be. */
  readonly base: UpperSnapshot;
}

/** `what` names the operation in the refusals ('merge', 'a review against the parent'). */
export async function forkPair(parent: OverlayFileSystem, fork: OverlayFileSystem, what: string): Promise<ForkPair> {
  const parentState = upperStateOf(parent);
  const forkState = upperStateOf(fork);
  if (parentState === undefined || forkState === undefined) throw new FsError('FS_INVALID_ARGUMENT', `${what} takes two overlays (createOverlayFs)`);
  if (parentState === forkState) throw new FsError('FS_INVALID_ARGUMENT', `${what} takes a fork and its parent, not one overlay twice`);
  if ((await rootOf(parent.lower)) !== (await rootOf(fork.lower))) throw new FsError('FS_INVALID_ARGUMENT', `${what} takes a fork over the same lower as the parent`);
  const base = await forkState.base();
  if (base === undefined) throw new FsError('FS_INVALID_ARGUMENT', `${what}: the overlay given as the fork is no fork (it has no base)`);
  return { parentState, forkState, base };
}

async function rootOf(lower: FileSystem): Promise<string> {
  return (await lower.resolve(lower.root ?? '/')).targetKey;
}
