import { posix } from 'node:path';
import { FsTargetKey, isFsError, type FileSystem, type FsTarget, type FsVersion } from '../seam/index.js';
import type { UpperSnapshot } from '../backends/overlay/state.js';
import { PMap, PSet } from '../backends/overlay/pmap.js';

// What one side of a merge shows at a path: an upper layer over the shared lower, read the way the
// overlay's view reads it (the upper's entry wins, a removed directory hides the lower below it).

export type Side =
  | { readonly kind: 'absent' }
  | { readonly kind: 'file'; readonly bytes: Uint8Array; readonly version: FsVersion; readonly executable: boolean }
  | { readonly kind: 'link'; readonly text: string }
  | { readonly kind: 'dir' }
  /** Something the overlay cannot merge (a special file, a link of the lower). */
  | { readonly kind: 'other' };

export const ABSENT: Side = { kind: 'absent' };

export function keyTarget(key: string): FsTarget {
  return { targetKey: FsTargetKey(key), displayPath: key };
}

/** What the lower shows at a key. */
export type LowerSides = (key: string) => Promise<Side>;

/** The lower's side at each key, each read once (a merge asks for the base's and ours at the same key). */
export function lowerSides(lower: FileSystem, signal: AbortSignal | undefined): LowerSides {
  const seen = new Map<string, Promise<Side>>();
  return (key) => {
    let side = seen.get(key);
    if (side === undefined) {
      side = lowerSide(lower, key, signal);
      seen.set(key, side);
    }
    return side;
  };
}

/** The side `layer` (over the lower) shows at `key`. */
export async function sideAt(lowerAt: LowerSides, layer: UpperSnapshot, key: string): Promise<Side> {
  const e = layer.entries.get(key);
  if (e?.kind === 'file') return { kind: 'file', bytes: e.bytes, version: e.version, executable: e.executable === true };
  if (e?.kind === 'link') return { kind: 'link', text: e.text };
  if (layer.dirs.has(key)) return { kind: 'dir' };
  if (e?.kind === 'whiteout' || hiddenIn(layer.opaque, key)) return ABSENT;
  return lowerAt(key);
}

async function lowerSide(lower: FileSystem, key: string, signal: AbortSignal | undefined): Promise<Side> {
  const target = keyTarget(key);
  try {
    const info = await lower.stat(target, { signal });
    if (info === undefined) return ABSENT;
    if (info.type === 'directory') return { kind: 'dir' };
    if (info.type !== 'file') return { kind: 'other' };
    const { bytes, version } = await lower.readBytes(target, { maxBytes: Number.MAX_SAFE_INTEGER, signal });
    return { kind: 'file', bytes, version, executable: info.executable === true };
  } catch (err) {
    if (isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY')) return ABSENT;
    if (isFsError(err, 'FS_NOT_REGULAR_FILE')) return { kind: 'other' };
    throw err;
  }
}

/** True when two sides show the same thing (bytes and executable bit, link text, a directory, nothing). */
export function sameSide(a: Side, b: Side): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'file' && b.kind === 'file') return a.executable === b.executable && Buffer.compare(a.bytes, b.bytes) === 0;
  if (a.kind === 'link' && b.kind === 'link') return a.text === b.text;
  return a.kind !== 'other';
}

/** The keys where layer `b` may show something other than layer `a` (their maps share the rest). */
export function changedKeys(a: UpperSnapshot, b: UpperSnapshot, into: Set<string>): void {
  for (const [key] of PMap.differences(a.entries, b.entries)) into.add(key);
  for (const [key] of PSet.differences(a.dirs, b.dirs)) into.add(key);
  for (const [key] of PSet.differences(a.opaque, b.opaque)) into.add(key);
}

function hiddenIn(opaque: PSet, key: string): boolean {
  if (opaque.size === 0) return false;
  for (let k = key; ; k = posix.dirname(k)) {
    if (opaque.has(k)) return true;
    if (k === '/') return false;
  }
}
