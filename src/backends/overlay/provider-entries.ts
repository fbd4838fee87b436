import { contentVersion, type FsTarget } from '../../seam/index.js';
import { WHOLE_FILE, bytesEqual, isHidden, lowerIfSame, lowerStat, pathTarget } from './core.js';
import type { UpperEntry, UpperOrigin } from './state.js';
import { visibleLowerStat, type OverlayProviderContext } from './provider-context.js';

// The upper entries that a file or directory of the view leaves behind, or brings, when it goes or moves.

/**
 * Whether an upper file going from `key` must leave a whiteout: only when the lower has something
 * there (no whiteouts for nothing), and not when that is the lower directory the overlay removed
 * at this very key (its removal is already recorded; a whiteout would read as a file deleted
 * where there was none). A lower file hidden by a removed ancestor keeps its whiteout.
 */
export async function needsWhiteout(ctx: OverlayProviderContext, key: string, signal: AbortSignal | undefined): Promise<boolean> {
  const below = await lowerStat(ctx.lower, pathTarget(key), signal);
  return below !== undefined && !(below.type === 'directory' && ctx.state.opaque.has(key));
}

/**
 * The upper entry a view file leaves behind when it goes (removed or moved away): a whiteout
 * with its base when the lower has a file there, else nothing.
 */
export async function leavingEntry(ctx: OverlayProviderContext, key: string, signal: AbortSignal | undefined): Promise<UpperEntry | undefined> {
  const entry = ctx.state.entries.get(key);
  if (entry?.kind === 'file') {
    if (entry.base !== undefined) return { kind: 'whiteout', base: entry.base };
    return (await needsWhiteout(ctx, key, signal)) ? { kind: 'whiteout', base: undefined } : undefined;
  }
  const info = await visibleLowerStat(ctx, pathTarget(key), signal);
  return { kind: 'whiteout', base: info?.type === 'file' ? info.version : undefined };
}

/** A directory of the view goes: the overlay forgets it, and a lower one is cut off (opaque). */
export async function leaveDirectory(
  ctx: OverlayProviderContext,
  dir: string,
  change: { dropDirs: string[]; addOpaque: string[] },
  signal: AbortSignal | undefined,
): Promise<void> {
  if (ctx.state.dirs.has(dir)) change.dropDirs.push(dir);
  if ((await visibleLowerStat(ctx, pathTarget(dir), signal))?.type === 'directory') change.addOpaque.push(dir);
}

/** The upper file a moved view file becomes at `key`: its bytes, where it came from, and the base there. */
export async function arrivingEntry(ctx: OverlayProviderContext, from: FsTarget, key: string, signal: AbortSignal | undefined): Promise<UpperEntry | undefined> {
  const { lower, state } = ctx;
  const entry = state.entries.get(from.targetKey);
  let bytes: Uint8Array;
  let origin: UpperOrigin | undefined;
  let executable: boolean;
  if (entry?.kind === 'file') {
    bytes = entry.bytes;
    executable = entry.executable === true;
    // A file made in the overlay has no lower origin: it is simply added at its new name.
    origin = entry.origin ?? (entry.base === undefined ? undefined : { path: from.targetKey });
  } else {
    const current = await lower.readBytes(from, { maxBytes: WHOLE_FILE, signal });
    bytes = current.bytes;
    executable = (await lowerStat(lower, from, signal))?.executable === true;
    origin = { path: from.targetKey, version: contentVersion(bytes) };
  }
  const there = state.entries.get(key);
  const base = there ? there.base : await visibleLowerStat(ctx, pathTarget(key), signal).then((i) => (i?.type === 'file' ? i.version : undefined));
  // As for writes: bytes the lower already holds there need no upper copy (moving a file back).
  const lowerNow = isHidden(state, key) ? undefined : await lowerIfSame(lower, pathTarget(key), bytes, signal);
  if (lowerNow !== undefined && bytesEqual(lowerNow.bytes, bytes) && lowerNow.executable === executable) return undefined;
  const version = contentVersion(bytes);
  const mtimeMs = entry?.kind === 'file' ? entry.mtimeMs : Date.now();
  return { kind: 'file', bytes, version, mtimeMs, base, ...(origin ? { origin } : {}), ...(executable ? { executable: true } : {}) };
}
