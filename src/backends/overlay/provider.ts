import { FsTargetKey, type FsProvider } from '../../seam/index.js';
import { TREE_LOCK, type OverlayCore } from './core.js';
import { createOverlaySetExecutable } from './modes.js';
import { createOverlayLinks, resolveInView } from './links.js';
import { applyOverlayBatch } from './batch.js';
import type { OverlayProviderContext } from './provider-context.js';
import { mkdir, rmdir } from './provider-dirs.js';
import { listMerged } from './provider-list.js';
import { lockAll } from './provider-locks.js';
import { openRead, read, stat } from './provider-read.js';
import { rename } from './provider-rename.js';
import { upperUsage } from './provider-usage.js';
import { planSwap, swap, swapFrom } from './provider-write.js';

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

    stat: (target, options) => stat(ctx, target, options),

    read: (target, options) => read(ctx, target, options),

    swap: (target, request) => swap(ctx, target, request),

    // Deferred swaps are durable once the state's journal is: every directory at once.
    flush: () => state.flush(),

    openRead: (target, options) => openRead(ctx, target, options),

    swapFrom: (target, request) => swapFrom(ctx, target, request),

    applyBatch: (swaps, { signal }) =>
      applyOverlayBatch(
        { lock, treeLock: TREE_LOCK, state, lockAll: (keys, fn) => lockAll(lock, keys, fn), planSwap: (s, sig, creating) => planSwap(ctx, s, sig, creating) },
        swaps,
        signal,
      ),

    mkdir: (target, options) => mkdir(ctx, target, options),

    rmdir: (target, options) => rmdir(ctx, target, options),

    rename: (from, to, options) => rename(ctx, from, to, options),

    listDir: (target, { signal, stats }) => listMerged(ctx, target, signal, stats !== false),

    usage: async (target) => (target === undefined ? state.usage : upperUsage(state, target.targetKey)),

    setExecutable: createOverlaySetExecutable(core),

    ...createOverlayLinks(core),

  };
  return provider;
}
