import { posix } from 'node:path';
import { FsError, checkRmdir, isWithin, throwIfAborted, type FsOpOptions, type FsTarget } from '../../seam/index.js';
import { TREE_LOCK, hasUpperDescendant, notDirectory, pathTarget } from './core.js';
import type { UpperEntry } from './state.js';
import { visibleLowerStat, type OverlayProviderContext } from './provider-context.js';
import { leaveDirectory, leavingEntry } from './provider-entries.js';
import { listMerged, viewTree } from './provider-list.js';
import { withSubtreeLocks } from './provider-locks.js';

/** Ancestors (nearest first) that the view lacks and a new file at `key` needs. */
export async function dirsToCreate(ctx: OverlayProviderContext, key: string, what: string, signal: AbortSignal | undefined): Promise<string[]> {
  const { state, rootKey } = ctx;
  const out: string[] = [];
  for (let dir = posix.dirname(key); isWithin(rootKey, dir); dir = posix.dirname(dir)) {
    const entry = state.entries.get(dir);
    if (entry?.kind === 'file') throw notDirectory(what);
    if (state.dirs.has(dir)) break;
    if (!entry) {
      const info = await visibleLowerStat(ctx, pathTarget(dir), signal);
      if (info?.type === 'directory') break;
      if (info) throw notDirectory(what);
      if (hasUpperDescendant(state, dir)) break;
    }
    out.push(dir);
    if (dir === '/') break;
  }
  return out;
}

export async function mkdir(ctx: OverlayProviderContext, target: FsTarget, { signal }: FsOpOptions): Promise<void> {
  const what = `cannot create directory "${target.displayPath}"`;
  await ctx.lock.run(TREE_LOCK, async () => {
    const info = await ctx.stat(target, { signal });
    if (info?.type === 'directory') return;
    if (info !== undefined) throw notDirectory(what);
    const addDirs = [target.targetKey, ...(await dirsToCreate(ctx, target.targetKey, what, signal))];
    await ctx.state.apply({ addDirs });
  });
}

export async function rmdir(ctx: OverlayProviderContext, target: FsTarget, { recursive, signal }: FsOpOptions & { readonly recursive: boolean }): Promise<void> {
  const { state } = ctx;
  const what = `cannot remove directory "${target.displayPath}"`;
  await withSubtreeLocks(ctx, [target], signal, async () => {
    const info = await ctx.stat(target, { signal });
    if (info === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    if (info.type !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
    checkRmdir(what, (await listMerged(ctx, target, signal, false)).length, recursive);
    const tree = await viewTree(ctx, target, signal);
    const change: { entries: [string, UpperEntry | undefined][]; dropDirs: string[]; addOpaque: string[] } = {
      entries: [],
      dropDirs: [],
      addOpaque: [],
    };
    for (const file of tree.files) change.entries.push([file, await leavingEntry(ctx, file, signal)]);
    for (const dir of tree.dirs) await leaveDirectory(ctx, dir, change, signal);
    // Links made in the overlay go with it.
    for (const key of tree.other) if (state.entries.get(key)?.kind === 'link') change.entries.push([key, undefined]);
    throwIfAborted(signal, what);
    // A lower symlink or special file below stays in the lower, hidden (commit then finds the
    // directory not empty).
    await state.apply(change);
  });
}
