import { FsTargetKey, type FsProvider } from '../../seam/index.js';
import { TREE_LOCK, type OverlayCore } from './core.js';
import { createOverlaySetExecutable } from './modes.js';
import { createOverlayLinks, resolveInView } from './links.js';
import type { OverlayProviderContext } from './provider-context.js';
import { listMerged } from './provider-list.js';
import { lockAll } from './provider-locks.js';
import { lazily } from '../../lazy.js';

// Reads, writes and directory changes: loaded by the first one, so opening a sandbox (a run, a
// status) does not load them.
const ops = lazily(async () => {
  const [read, write, dirs, rename, usage, batch] = await Promise.all([
    import('./provider-read.js'),
    import('./provider-write.js'),
    import('./provider-dirs.js'),
    import('./provider-rename.js'),
    import('./provider-usage.js'),
    import('./batch.js'),
  ]);
  const { statOnce } = await import('./lower-stats.js');
  return { ...read, ...write, ...dirs, ...rename, ...usage, ...batch, statOnce };
});

/**
 * The overlay as a storage provider. Target keys are the lower's (canonical absolute paths), so
 * aliases resolve as the lower resolves them; text semantics come from the seam.
 */
export function createOverlayProvider(core: OverlayCore): FsProvider {
  const { lower, state, rootKey, lock } = core;
  // Late bound through the provider object: the parts call the very stat its callers do.
  const ctx: OverlayProviderContext = { lower, state, rootKey, lock, stat: (target, options) => provider.stat(target, options) };

  const provider: FsProvider = {
    ...(lower.root === undefined ? {} : { root: lower.root }),
    cwd: lower.cwd,

    async resolve(path, { signal }) {
      if (!state.hasLinks) return lower.resolve(path, { signal });
      return { targetKey: FsTargetKey(await resolveInView(core, path, signal)), displayPath: path };
    },

    contains: (parent, child) => lower.contains(parent, child),

    stat: async (target, options) => (await ops()).stat(ctx, target, options),

    read: async (target, options) => (await ops()).read(ctx, target, options),

    swap: async (target, request) => (await ops()).swap(ctx, target, request),

    // Deferred swaps are durable once the state's journal is: every directory at once.
    flush: () => state.flush(),

    openRead: async (target, options) => (await ops()).openRead(ctx, target, options),

    swapFrom: async (target, request) => (await ops()).swapFrom(ctx, target, request),

    applyBatch: async (swaps, { signal }) => {
      const { applyOverlayBatch, planSwap, statOnce } = await ops();
      // One view of the lower for the whole batch (see statOnce).
      const batchCtx = { ...ctx, lower: statOnce(lower) };
      return applyOverlayBatch(
        { lock, treeLock: TREE_LOCK, state, lockAll: (keys, fn) => lockAll(lock, keys, fn), planSwap: (s, sig, creating) => planSwap(batchCtx, s, sig, creating) },
        swaps,
        signal,
      );
    },

    mkdir: async (target, options) => (await ops()).mkdir(ctx, target, options),

    rmdir: async (target, options) => (await ops()).rmdir(ctx, target, options),

    rename: async (from, to, options) => (await ops()).rename(ctx, from, to, options),

    listDir: (target, { signal, stats }) => listMerged(ctx, target, signal, stats !== false),

    usage: async (target) => (target === undefined ? state.usage : (await ops()).upperUsage(state, target.targetKey)),

    setExecutable: createOverlaySetExecutable(core),

    ...createOverlayLinks(core),

  };
  return provider;
}
