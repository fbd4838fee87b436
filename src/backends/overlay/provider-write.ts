import { contentVersion, expectHolds, observe, throwIfAborted, type FsSwapFromRequest, type FsSwapRequest, type FsSwapResult, type FsTarget } from '../../seam/index.js';
import { TREE_LOCK, bytesEqual, hasUpperDescendant, isHidden, lowerIfSame, notRegular } from './core.js';
import type { UpperEntry, UpperFile, UpperOrigin } from './state.js';
import type { PlannedSwap, SwapPlanRequest } from './batch.js';
import { visibleLowerStat, type OverlayProviderContext } from './provider-context.js';
import { dirsToCreate } from './provider-dirs.js';
import { needsWhiteout } from './provider-entries.js';
import { baseContent } from './base-bytes.js';
import { statOnce } from './lower-stats.js';

/**
 * The view's file at `target` without reading any content: its version (undefined when there is
 * none), the upper entry, and the lower's stat when the view shows the lower.
 */
async function viewVersion(ctx: OverlayProviderContext, target: FsTarget, what: string, signal: AbortSignal | undefined) {
  const { state } = ctx;
  const key = target.targetKey;
  const entry = state.entries.get(key);
  if (entry?.kind === 'file') return { version: entry.version, entry };
  if (state.dirs.has(key)) throw notRegular(what);
  if (entry) return { version: undefined, entry };
  const info = await visibleLowerStat(ctx, target, signal);
  if (info === undefined) {
    if (hasUpperDescendant(state, key)) throw notRegular(what);
    return { version: undefined };
  }
  if (info.type !== 'file') throw notRegular(what);
  return { version: info.version, lower: info };
}

/** What a file moved away from `from` brings along: its executable bit and its origin. */
async function movedFrom(ctx: OverlayProviderContext, from: FsTarget, signal: AbortSignal | undefined): Promise<{ executable: boolean; origin: UpperOrigin | undefined }> {
  const entry = ctx.state.entries.get(from.targetKey);
  if (entry?.kind === 'file') {
    return { executable: entry.executable === true, origin: entry.origin ?? (entry.base === undefined ? undefined : { path: from.targetKey }) };
  }
  const info = await visibleLowerStat(ctx, from, signal);
  return { executable: info?.executable === true, origin: info?.type === 'file' ? { path: from.targetKey, version: info.version } : undefined };
}

/**
 * What a swap does, without doing it: its result, and the upper change that publishes it
 * (none when nothing changes). Undefined when it would create a file and `creating` is false
 * (the caller then takes the tree lock and asks again). A write with `from` moves that file here.
 */
export async function planSwap(ctx: OverlayProviderContext, swap: SwapPlanRequest, signal: AbortSignal | undefined, creating: boolean): Promise<PlannedSwap | undefined> {
  const { target, expect, bytes } = swap;
  const key = target.targetKey;
  const what = `cannot ${bytes === null ? 'remove' : 'write'} "${target.displayPath}"`;
  const view = await viewVersion(ctx, target, what, signal);
  const before = view.version === undefined ? undefined : { version: view.version };
  if (!expectHolds(expect, before)) return { result: { ok: false, current: observe(before) } };
  const existed = before !== undefined;
  if (!existed && bytes !== null && !creating) return undefined;
  throwIfAborted(signal, what);
  if (bytes === null) {
    if (!existed) return { result: { ok: true, existed } };
    let next: UpperEntry | undefined;
    if (view.entry) {
      next = (await needsWhiteout(ctx, key, signal)) ? { kind: 'whiteout', base: view.entry.base } : undefined;
    } else {
      next = { kind: 'whiteout', base: view.lower?.version };
    }
    return { result: { ok: true, existed }, change: { entries: [[key, next]] } };
  }
  const addDirs = existed ? [] : await dirsToCreate(ctx, key, what, signal);
  throwIfAborted(signal, what);
  // A file replaced keeps its executable bit (X1); a moved one brings its own, and where it came from.
  const moved = swap.from === undefined ? undefined : await movedFrom(ctx, swap.from, signal);
  const executable = moved ? moved.executable : view.entry?.kind === 'file' ? view.entry.executable === true : view.lower?.executable === true;
  // Bytes the lower already holds need no upper copy: the path shows the lower, at its version.
  // (Not below a removed directory: there the lower is hidden, so the copy is the file.)
  const lowerNow = isHidden(ctx.state, key) ? undefined : await lowerIfSame(ctx.lower, target, bytes, signal);
  if (lowerNow !== undefined && bytesEqual(lowerNow.bytes, bytes) && lowerNow.executable === executable) {
    const change = view.entry || addDirs.length > 0 ? { entries: [[key, undefined]] as [string, undefined][], addDirs } : undefined;
    return { result: { ok: true, existed, version: lowerNow.version }, ...(change ? { change } : {}) };
  }
  const version = contentVersion(bytes);
  const base = view.entry ? view.entry.base : view.lower?.version;
  // A moved file keeps where it came from when rewritten (changes() shows a rename with edits).
  const origin = moved ? moved.origin : view.entry?.kind === 'file' ? view.entry.origin : undefined;
  const baseBytes = view.entry ? (view.entry.kind === 'file' ? view.entry.baseBytes : undefined) : await baseContent(ctx.lower, target, view.lower, lowerNow, signal);
  const file: UpperFile = {
    kind: 'file', bytes, version, mtimeMs: Date.now(), base, ...(origin ? { origin } : {}), ...(executable ? { executable: true } : {}), ...(baseBytes ? { baseBytes } : {}),
  };
  return { result: { ok: true, existed, version }, change: { entries: [[key, file]], addDirs } };
}

export function swap(given: OverlayProviderContext, target: FsTarget, { expect, bytes, signal, durability }: FsSwapRequest): Promise<FsSwapResult> {
  const { state, lock } = given;
  // A create plans twice (before and under the tree lock), each plan asking the lower about the
  // same path up to twice: ask once.
  const ctx = { ...given, lower: statOnce(given.lower) };
  // Deferred (F1): saved without the journal's fsync, which `flush` (or the next save) makes.
  const options = durability === 'deferred' ? { deferred: true } : undefined;
  const attempt = async (creating: boolean): Promise<FsSwapResult | undefined> => {
    const planned = await planSwap(ctx, { target, expect, bytes }, signal, creating);
    if (planned?.change) await state.apply(planned.change, options);
    return planned?.result;
  };
  return lock.run(target.targetKey, async () => {
    // Creating a file changes the tree (new directories, a name that a sibling create may need
    // as a directory), so creates also hold the tree lock; rewrites of a file do not.
    return (await attempt(false)) ?? lock.run(TREE_LOCK, async () => (await attempt(true))!);
  });
}

/**
 * swapFrom (V7): the upper keeps a changed file's bytes, so the stream is gathered into the one
 * copy the upper will hold (a large lower file is copied up only when it is changed), then swapped.
 */
export async function swapFrom(ctx: OverlayProviderContext, target: FsTarget, { source, ...request }: FsSwapFromRequest): Promise<FsSwapResult> {
  const parts: Uint8Array[] = [];
  for await (const chunk of source) parts.push(chunk);
  const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  parts.length = 0;
  return swap(ctx, target, { ...request, bytes });
}
