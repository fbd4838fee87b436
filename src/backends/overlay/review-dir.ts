import { isFsError } from '../../seam/index.js';
import { hasUpperDescendant, lowerStat } from './core.js';
import { conflict } from './problems.js';
import type { ReviewContext } from './review-context.js';
import { removalBlocked } from './review-checks.js';
import { lowerTarget } from './review-lower.js';
import type { Step, StepOutcome } from './review-steps.js';

/** A removed lower directory (non-recursive: anything that appeared in it is a conflict), or a made one. */
export async function commitDirectory(ctx: ReviewContext, step: Step, path: string, what: string, signal: AbortSignal | undefined, force: boolean): Promise<StepOutcome> {
  const { lower, state } = ctx;
  const key = step.key;
  const target = await lowerTarget(ctx, key, what, signal);
  if (!('targetKey' in target)) return { ...target, path };
  if (step.op === 'rmdir') {
    if (!state.opaque.has(key)) return 'committed';
    let overwritten = false;
    try {
      await lower.rmdir(target, { signal });
    } catch (err) {
      if (isFsError(err, 'FS_ABORTED')) throw err;
      if (!isFsError(err, 'FS_NOT_FOUND')) {
        if (!isFsError(err, 'FS_NOT_EMPTY') && !isFsError(err, 'FS_NOT_DIRECTORY')) throw err;
        const now = await lowerStat(lower, target, signal);
        const found = now === undefined ? 'nothing' : now.type === 'directory' ? 'a directory that is not empty' : `a ${now.type}`;
        if (!force) {
          const why = now?.type === 'directory' ? await removalBlocked(ctx, key, signal) : `found ${found}`;
          // Nothing new below: what is left is the overlay's own removals or moves that did not go through.
          if (why === undefined) {
            return conflict(path, `${what}: files below it whose removal or move was not committed (see their own results) are still in the lower; the lower was not changed`);
          }
          return conflict(path, `${what}: the lower changed since the overlay removed this directory (${why}); the lower was not changed`);
        }
        if (now?.type === 'directory') await lower.rmdir(target, { recursive: true, signal });
        else if (now !== undefined) await lower.remove(target, undefined, { signal });
        overwritten = true;
      }
    }
    await state.apply({ dropOpaque: [key] });
    return overwritten ? 'overwritten' : 'committed';
  }
  if (!state.dirs.has(key) || state.opaque.has(key)) return 'committed';
  let overwritten = false;
  try {
    await lower.mkdir(target, { signal });
  } catch (err) {
    if (isFsError(err, 'FS_ABORTED')) throw err;
    const now = await lowerStat(lower, target, signal);
    if (!isFsError(err, 'FS_NOT_DIRECTORY') || now === undefined) throw err;
    if (!force) return conflict(path, `${what}: the lower now has a ${now.type} there; the lower was not changed`);
    await lower.remove(target, undefined, { signal });
    await lower.mkdir(target, { signal });
    overwritten = true;
  }
  if (!hasUpperDescendant(state, key)) await state.apply({ dropDirs: [key] });
  return overwritten ? 'overwritten' : 'committed';
}
