import { posix } from 'node:path';
import { isFsError, isWithin } from '../../seam/index.js';
import { isHidden, lowerStat } from './core.js';
import type { UpperEntry } from './state.js';
import { publishMode } from './modes.js';
import { isLinkVersion } from './links.js';
import { commitLink } from './link-review.js';
import { conflict } from './problems.js';
import type { ReviewContext } from './review-context.js';
import { conflictMessage, lowerAsBase, lowerHolds, lowerTarget, overwrite, publish } from './review-lower.js';
import type { Batch, Step, StepOutcome } from './review-steps.js';
import type { OverlayChange } from './review-types.js';

/** A file's write, or a removal (a whiteout, a moved file's source, a lower file below a removed directory). */
export async function commitFile(
  ctx: ReviewContext,
  step: Step,
  change: OverlayChange,
  what: string,
  signal: AbortSignal | undefined,
  force: boolean,
  batch?: Batch,
): Promise<StepOutcome> {
  const { state, rootKey } = ctx;
  const path = change.path;
  const entry = state.entries.get(step.key);
  if (!entry) return 'committed';
  if (entry.kind === 'link' || isLinkVersion(entry.base)) return commitLink(ctx, step.key, entry, what, signal, force);
  // A move published as a removal and a write: the source goes only if the new name can still
  // take the file, so a conflict there leaves the move whole (nothing half-written).
  if (step.op === 'remove' && change.from === step.key && !force) {
    const moved = state.entries.get(path);
    if (moved?.kind === 'file') {
      const dst = await lowerTarget(ctx, path, what, signal);
      if (!('targetKey' in dst)) return dst;
      const ready = isHidden(state, path) || (await lowerAsBase(ctx, dst, moved, signal)) || (await lowerHolds(ctx, dst, moved, signal));
      if (!ready) return conflict(path, await conflictMessage(ctx, `cannot commit "${path}"`, dst, moved, signal));
    }
  }
  // A removal step for a file entry removes the lower's file under it, then the entry is new.
  const desired: UpperEntry = step.op === 'remove' && entry.kind === 'file' ? { kind: 'whiteout', base: entry.base } : entry;
  const done: UpperEntry | undefined =
    entry.kind === 'file' && desired !== entry
      ? { kind: 'file', bytes: entry.bytes, version: entry.version, mtimeMs: entry.mtimeMs, base: undefined, ...(entry.executable ? { executable: true } : {}) }
      : undefined;
  if (step.op === 'write' && entry.kind !== 'file') return 'committed';
  const target = await lowerTarget(ctx, step.key, what, signal);
  if (!('targetKey' in target)) return { ...target, path };
  let overwritten = false;
  try {
    await publish(ctx, target, desired, signal, batch);
  } catch (err) {
    if (isFsError(err, 'FS_ABORTED')) throw err;
    // Not a conflict when the lower is still as the overlay first saw it (e.g. a parent is a file).
    if (!isFsError(err, 'FS_STALE_VERSION') && !isFsError(err, 'FS_NOT_OBSERVED') && (await lowerAsBase(ctx, target, desired, signal))) {
      throw err;
    }
    // Someone already made the lower what the overlay wants: nothing to overwrite, nothing lost.
    // Not so for a changed file's lower copy that went underneath: the change was made to it.
    const replacing = desired !== entry && entry.base !== undefined;
    if (replacing || !(await lowerHolds(ctx, target, desired, signal))) {
      if (!force) return conflict(path, await conflictMessage(ctx, what, target, desired, signal));
      await overwrite(ctx, target, desired, signal, batch);
      overwritten = true;
    }
  }
  if (batch) {
    batch.settle.push([step.key, entry, done, step.change]);
    for (let d = posix.dirname(target.targetKey); isWithin(rootKey, d) && !batch.dirs.has(d); d = posix.dirname(d)) {
      // Ancestors too: a directory the write made is durable only once its parent is flushed.
      batch.dirs.add(d);
      if (d === rootKey || d === '/') break;
    }
  } else await state.apply({ entries: [[step.key, done]] });
  return overwritten ? 'overwritten' : 'committed';
}

/** A move published with the lower's atomic rename, guarded at both names. */
export async function commitRename(ctx: ReviewContext, path: string, what: string, signal: AbortSignal | undefined, force: boolean): Promise<StepOutcome> {
  const { lower, state, lock } = ctx;
  const first = state.entries.get(path);
  if (first?.kind !== 'file' || first.origin === undefined) return 'committed';
  const from = first.origin.path;
  const [k1, k2] = [from, path].sort();
  return lock.run(k1!, () =>
    lock.run(k2!, async () => {
      const entry = state.entries.get(path);
      const source = state.entries.get(from);
      if (entry?.kind !== 'file' || source?.kind !== 'whiteout') return 'committed';
      const src = await lowerTarget(ctx, from, what, signal);
      if (!('targetKey' in src)) return { ...src, path };
      const dst = await lowerTarget(ctx, path, what, signal);
      if (!('targetKey' in dst)) return dst;
      let overwritten = false;
      try {
        await lower.rename(src, dst, { ...(source.base === undefined ? {} : { expect: source.base }), replace: entry.base ?? false, signal });
        await publishMode(lower, dst, entry, signal);
      } catch (err) {
        if (isFsError(err, 'FS_ABORTED')) throw err;
        const srcAsBase = await lowerAsBase(ctx, src, source, signal);
        const dstAsBase = await lowerAsBase(ctx, dst, entry, signal);
        if (srcAsBase && dstAsBase) throw err;
        if (srcAsBase && (await lowerHolds(ctx, dst, entry, signal))) {
          // The new name already holds this content underneath: only the source is left to remove.
          await publish(ctx, src, source, signal);
          await state.apply({ entries: [[path, undefined], [from, undefined]] });
          return 'committed';
        }
        const srcGone = (await lowerStat(lower, src, signal)) === undefined;
        if (srcGone && dstAsBase) {
          // The source went underneath: that side is already as wanted; the content is the overlay's.
          await publish(ctx, dst, entry, signal);
          await state.apply({ entries: [[path, undefined], [from, undefined]] });
          return 'committed';
        }
        const done = (await lowerStat(lower, src, signal)) === undefined && (await lowerHolds(ctx, dst, entry, signal));
        if (!done) {
          if (!force) {
            const bad = srcAsBase ? dst : src;
            return conflict(path, await conflictMessage(ctx, what, bad, bad === src ? source : entry, signal));
          }
          await overwrite(ctx, dst, entry, signal);
          await overwrite(ctx, src, source, signal);
          overwritten = true;
        }
      }
      await state.apply({ entries: [[path, undefined], [from, undefined]] });
      return overwritten ? 'overwritten' : 'committed';
    }),
  );
}
