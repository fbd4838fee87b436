import { FsError, contentVersion, isFsError, type FsVersion } from '../../seam/index.js';
import { bytesEqual, lowerIfSame, lowerStat, pathTarget } from './core.js';
import { overlayCore } from './compose.js';
import { commitLink } from './link-review.js';
import { journaled } from './journaled.js';
import { conflict, type OverlayCommitProblem } from './problems.js';
import type { UpperEntry, UpperFile } from './state.js';
import type { OverlayFileSystem } from './types.js';

// Part of a file's change published, part kept: what review by hunk asks of the overlay.

export interface RebaseItem {
  /** The target key of a file the upper holds over a lower file (a modification). */
  readonly key: string;
  /** The upper entry as the caller read it: if it changed since, the item is refused. */
  readonly expect: UpperEntry;
  /** Bytes to write to the lower, guarded by the entry's base version (as commit is). */
  readonly publish?: Uint8Array;
  /** The overlay's bytes afterwards; the entry goes when they equal the lower's. */
  readonly keep: Uint8Array;
}

export interface RebaseResult {
  readonly done: string[];
  /** Items whose lower (or upper) file changed since it was read: nothing written for them. */
  readonly conflicts: OverlayCommitProblem[];
}

/**
 * For each item: publishes `publish` to the lower (guarded by the base version), then makes the
 * upper hold `keep` over the lower's new version. All upper changes are applied as one change
 * (one checkpoint). The view of a file whose `keep` equals its bytes is unchanged.
 */
export async function rebaseFiles(overlay: OverlayFileSystem, items: readonly RebaseItem[], signal?: AbortSignal): Promise<RebaseResult> {
  const core = overlayCore(overlay);
  if (!core) throw new FsError('FS_INVALID_ARGUMENT', 'rebaseFiles takes an overlay made by createOverlayFs');
  const { lower, state } = core;
  const result: RebaseResult = { done: [], conflicts: [] };
  const entries: [string, UpperEntry | undefined][] = [];
  // Journaled as a commit is (J1): killed part-way, the next open puts the folder back as it was.
  // The sandbox's entries change only after the journal ended, so a folder put back never lacks
  // what the sandbox let go of.
  const published = items.filter((item) => item.publish !== undefined).map((item) => item.key);
  await journaled(lower, { kind: 'rebase', owner: undefined, keys: published, ...(signal === undefined ? {} : { signal }) }, async () => {
    for (const item of items) {
      const entry = item.expect;
      if (state.entries.get(item.key) !== entry || entry.kind !== 'file' || entry.base === undefined) {
        result.conflicts.push(conflict(item.key, `"${item.key}" changed in the sandbox since it was reviewed`));
        continue;
      }
      const target = pathTarget(item.key);
      let base: FsVersion = entry.base;
      if (item.publish !== undefined) {
        try {
          base = (await lower.writeBytes(target, item.publish, { kind: 'replaceIfVersion', version: entry.base }, { signal })).version;
        } catch (err) {
          if (!isFsError(err, 'FS_STALE_VERSION') && !isFsError(err, 'FS_NOT_OBSERVED') && !isFsError(err, 'FS_NOT_FOUND')) throw err;
          result.conflicts.push(conflict(item.key, `"${item.key}" changed in the folder since the sandbox first saw it; nothing was written to it`));
          continue;
        }
      }
      const now = item.publish === undefined ? await lowerIfSame(lower, target, item.keep, signal) : undefined;
      const same = item.publish !== undefined ? bytesEqual(item.publish, item.keep) : now !== undefined && bytesEqual(now.bytes, item.keep);
      // A file made executable (or not) keeps its entry: the mode is still to be reviewed.
      const modeSame = !same || (await lowerStat(lower, target, signal))?.executable === (entry.executable === true);
      const kept = bytesEqual(entry.bytes, item.keep);
      const next: UpperFile = kept ? { ...entry, base } : { ...entry, bytes: item.keep, version: contentVersion(item.keep), mtimeMs: Date.now(), base };
      entries.push([item.key, same && modeSame ? undefined : next]);
      result.done.push(item.key);
    }
  });
  if (entries.length > 0) {
    await state.apply({ entries });
    core.changed();
  }
  return result;
}

/**
 * Links made, replaced or removed in the overlay, each published (`accept`) or dropped from the
 * upper, by their own keys: unlike `commit` and `discard` paths, a link's key never selects what
 * it points to. The drops are one change.
 */
export async function settleLinks(overlay: OverlayFileSystem, items: readonly { readonly key: string; readonly accept: boolean }[], signal?: AbortSignal): Promise<RebaseResult> {
  const core = overlayCore(overlay);
  if (!core) throw new FsError('FS_INVALID_ARGUMENT', 'settleLinks takes an overlay made by createOverlayFs');
  const result: RebaseResult = { done: [], conflicts: [] };
  const drops: [string, undefined][] = [];
  for (const { key, accept } of items) {
    const entry = core.state.entries.get(key);
    if (!entry) continue;
    if (!accept) {
      drops.push([key, undefined]);
      result.done.push(key);
      continue;
    }
    const outcome = await core.lock.run(key, () => commitLink(core, key, entry, `cannot commit "${key}"`, signal, false));
    if (typeof outcome === 'string') result.done.push(key);
    else result.conflicts.push(outcome);
  }
  if (drops.length > 0) await core.state.apply({ entries: drops });
  if (result.done.length > 0) core.changed();
  return result;
}
