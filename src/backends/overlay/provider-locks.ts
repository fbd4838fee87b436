import { FsError, throwIfAborted, type FsTarget, type KeyedMutex } from '../../seam/index.js';
import { TREE_LOCK } from './core.js';
import type { OverlayProviderContext } from './provider-context.js';
import { viewTree } from './provider-list.js';

/**
 * Runs `fn` holding the lock of every key at and below the given names, in sorted order, and
 * then the tree lock: the order every other path uses (a key, then the tree lock), so no
 * deadlock. Creates take the tree lock, so once it is held the set cannot grow; if it grew
 * before, start again with the larger set.
 */
export async function withSubtreeLocks<T>(ctx: OverlayProviderContext, tops: FsTarget[], signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  const { lock } = ctx;
  const keysNow = async () => {
    const keys = new Set<string>();
    for (const top of tops) {
      keys.add(top.targetKey);
      if ((await ctx.stat(top, { signal }))?.type !== 'directory') continue;
      const tree = await viewTree(ctx, top, signal);
      for (const k of [...tree.files, ...tree.dirs]) keys.add(k);
    }
    return [...keys].sort();
  };
  for (let attempt = 1; ; attempt++) {
    const keys = await keysNow();
    const result = await lockAll(lock, keys, async () =>
      lock.run(TREE_LOCK, async () => {
        const now = await keysNow();
        if (now.some((k) => !keys.includes(k))) return { retry: true as const };
        return { retry: false as const, value: await fn() };
      }),
    );
    if (!result.retry) return result.value;
    throwIfAborted(signal, 'the directory kept changing');
    if (attempt >= 20) throw new FsError('FS_STALE_VERSION', 'the directory kept changing while it was being moved or removed; try again');
  }
}

export function lockAll<T>(lock: KeyedMutex, keys: readonly string[], fn: () => Promise<T>, i = 0): Promise<T> {
  return i >= keys.length ? fn() : lock.run(keys[i]!, () => lockAll(lock, keys, fn, i + 1));
}
