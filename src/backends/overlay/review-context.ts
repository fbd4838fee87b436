import type { FileSystem } from '../../seam/index.js';
import type { OverlayCore } from './core.js';

/** What every part of the review shares: the overlay's storage, and the view that resolves paths as it shows them. */
export interface ReviewContext extends OverlayCore {
  /** The overlay's own filesystem: selected paths are resolved through it. */
  readonly view: FileSystem;
}

export function createReviewContext(core: OverlayCore, view: FileSystem): ReviewContext {
  const { lower, state, rootKey, lock, owner } = core;
  return { lower, state, rootKey, lock, view, ...(owner === undefined ? {} : { owner }) };
}
