import { FsError, type FsTarget, type FsWriteOptions } from '../../seam/index.js';
import { bytesEqual, lowerIfSame, lowerStat } from './core.js';
import type { UpperEntry } from './state.js';
import { publishMode } from './modes.js';
import { conflict, type OverlayCommitProblem } from './problems.js';
import type { ReviewContext } from './review-context.js';
import type { Batch } from './review-steps.js';

// What a commit asks of the lower and does to it, guarded by the versions the overlay saw.

/** The lower's target for `key`, or a conflict when the path now leads elsewhere there. */
export async function lowerTarget(ctx: ReviewContext, key: string, what: string, signal: AbortSignal | undefined): Promise<FsTarget | OverlayCommitProblem> {
  const target = await ctx.lower.resolve(key, { signal });
  if (target.targetKey !== key) return conflict(key, `${what}: the path now leads to "${target.targetKey}" in the lower layer`);
  return target;
}

export async function publish(ctx: ReviewContext, target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined, batch?: Batch): Promise<void> {
  if (entry.kind === 'file') {
    const intent = entry.base === undefined ? ({ kind: 'createIfAbsent' } as const) : ({ kind: 'replaceIfVersion', version: entry.base } as const);
    await ctx.lower.writeBytes(target, entry.bytes, intent, writeOptions(signal, batch));
    await publishMode(ctx.lower, target, entry, signal);
  } else if (entry.base !== undefined) {
    await ctx.lower.remove(target, { kind: 'replaceIfVersion', version: entry.base }, { signal });
  } else if ((await lowerStat(ctx.lower, target, signal)) !== undefined) {
    // Removed here after it was created here; the lower's file appeared underneath.
    throw new FsError('FS_STALE_VERSION', 'the lower has a file the overlay never saw');
  }
}

/** The forced commit of a conflicting path: no guard, whatever the lower holds now. */
export async function overwrite(ctx: ReviewContext, target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined, batch?: Batch): Promise<void> {
  if (entry.kind === 'file') {
    await ctx.lower.writeBytes(target, entry.bytes, undefined, writeOptions(signal, batch));
    await publishMode(ctx.lower, target, entry, signal);
  }
  else if ((await lowerStat(ctx.lower, target, signal)) !== undefined) await ctx.lower.remove(target, undefined, { signal });
}

export async function lowerAsBase(ctx: ReviewContext, target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<boolean> {
  const now = await lowerStat(ctx.lower, target, signal);
  return entry.base === undefined ? now === undefined : now?.type === 'file' && now.version === entry.base;
}

export async function lowerHolds(ctx: ReviewContext, target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<boolean> {
  if (entry.kind !== 'file') return (await lowerStat(ctx.lower, target, signal)) === undefined;
  const now = await lowerIfSame(ctx.lower, target, entry.bytes, signal);
  return now !== undefined && bytesEqual(now.bytes, entry.bytes);
}

export async function conflictMessage(ctx: ReviewContext, what: string, target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<string> {
  const now = await lowerStat(ctx.lower, target, signal).catch(() => undefined);
  const found = now === undefined ? 'no file' : now.type === 'file' ? `version ${now.version}` : `a ${now.type}`;
  const expected = entry.base === undefined ? 'no file' : `version ${entry.base}`;
  return `${what}: the lower changed since the overlay first saw it at "${target.targetKey}" (expected ${expected}, found ${found}); the lower was not changed`;
}

export function writeOptions(signal: AbortSignal | undefined, batch: Batch | undefined): FsWriteOptions {
  return batch ? { signal, durability: 'deferred' } : { signal };
}

