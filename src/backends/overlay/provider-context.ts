import type { FsProvider, FsProviderInfo, FsTarget } from '../../seam/index.js';
import { isHidden, lowerStat, type OverlayCore } from './core.js';

/**
 * What every part of the overlay provider shares: the core, plus the provider's own stat,
 * called through the provider object so that listings and checks see the view as it stands.
 */
export interface OverlayProviderContext extends OverlayCore {
  readonly stat: FsProvider['stat'];
}

/** The lower's stat where the view shows the lower: nothing at or below a removed directory. */
export async function visibleLowerStat(
  ctx: OverlayProviderContext,
  target: FsTarget,
  signal: AbortSignal | undefined,
  versioned = true,
): Promise<FsProviderInfo | undefined> {
  return isHidden(ctx.state, target.targetKey) ? undefined : lowerStat(ctx.lower, target, signal, versioned);
}
