import { FsError, checkRename, throwIfAborted, type FsProviderRename, type FsTarget, type RenameSide } from '../../seam/index.js';
import { pathTarget } from './core.js';
import type { UpperEntry } from './state.js';
import type { OverlayProviderContext } from './provider-context.js';
import { dirsToCreate } from './provider-dirs.js';
import { arrivingEntry, leaveDirectory, leavingEntry } from './provider-entries.js';
import { listMerged, viewTree } from './provider-list.js';
import { withSubtreeLocks } from './provider-locks.js';

/** What a rename's checks need of one name in the view. */
async function renameSide(ctx: OverlayProviderContext, target: FsTarget, signal: AbortSignal | undefined): Promise<RenameSide | undefined> {
  const info = await ctx.stat(target, { signal });
  if (info?.type !== 'directory') return info && { type: info.type, version: info.version };
  return { type: 'directory', version: info.version, empty: (await listMerged(ctx, target, signal, false)).length === 0 };
}

export async function rename(ctx: OverlayProviderContext, from: FsTarget, to: FsTarget, { expect, replace, signal }: FsProviderRename): Promise<void> {
  const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
  await withSubtreeLocks(ctx, [from, to], signal, async () => {
    const source = await renameSide(ctx, from, signal);
    const dest = await renameSide(ctx, to, signal);
    const replacing = checkRename(what, source, dest, { expect, replace });
    const change: { entries: [string, UpperEntry | undefined][]; dropDirs: string[]; addDirs: string[]; addOpaque: string[] } = {
      entries: [],
      dropDirs: [],
      addDirs: [],
      addOpaque: [],
    };
    if (replacing === 'none') change.addDirs.push(...(await dirsToCreate(ctx, to.targetKey, what, signal)));
    // The destination's name is taken by what arrives; an empty lower directory there goes.
    if (replacing === 'directory') await leaveDirectory(ctx, to.targetKey, change, signal);
    const moved = new Map<string, UpperEntry | undefined>();
    const mapKey = (key: string) => to.targetKey + key.slice(from.targetKey.length);
    if (source!.type === 'file') {
      moved.set(from.targetKey, await leavingEntry(ctx, from.targetKey, signal));
      moved.set(to.targetKey, await arrivingEntry(ctx, from, to.targetKey, signal));
    } else {
      const tree = await viewTree(ctx, from, signal);
      if (tree.other.length > 0) {
        throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the overlay cannot move "${tree.other[0]}" (a symlink or special file) inside the directory`);
      }
      // Sources first: a destination key may be a source key too only when moving onto itself.
      for (const file of tree.files) moved.set(file, await leavingEntry(ctx, file, signal));
      for (const file of tree.files) moved.set(mapKey(file), await arrivingEntry(ctx, pathTarget(file), mapKey(file), signal));
      for (const dir of tree.dirs) await leaveDirectory(ctx, dir, change, signal);
      for (const dir of tree.dirs) change.addDirs.push(mapKey(dir));
    }
    throwIfAborted(signal, what);
    change.entries.push(...moved);
    // A directory both left and arrived at (moving onto an empty one) stays.
    const arriving = new Set(change.addDirs);
    change.dropDirs = change.dropDirs.filter((d) => !arriving.has(d));
    await ctx.state.apply(change);
  });
}
