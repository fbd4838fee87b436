import { posix } from 'node:path';
import { compareNames, isFsError, isWithin, throwIfAborted, type FileSystem, type FsOpOptions, type FsVersion } from '../../seam/index.js';
import { settleAll } from '../../seam/settle.js';
import { PMap, PSet } from './pmap.js';
import { lowerFile, lowerStat, pathTarget, type OverlayCore } from './core.js';
import { lazily } from '../../lazy.js';
import type { OverlayChange } from './review.js';
import { isLinkVersion, linkVersion } from './links.js';
import type { UpperEntry, UpperSnapshot } from './state.js';

// The diff package, loaded by the first diff.
const fileDiffs = lazily(() => import('./file-diff.js'));

/**
 * A fork's changes against its parent as it was at the fork: what this attempt did differently.
 * Both sides are upper layers over the same lower, so only the keys where the two layers differ
 * can differ in the views; the two maps share everything else, so finding them costs time in the
 * number of differences, not in the size of either layer.
 */
export function createForkReview(core: OverlayCore, view: FileSystem) {
  const { lower, state, rootKey } = core;

  const sidesOf = (given: LayerSides | undefined) => sidesFor(state, given);
  const showsDirectory = (layer: UpperSnapshot, live: boolean, key: string, signal: AbortSignal | undefined) =>
    showsDirectoryIn(core, view, layer, live, key, signal);

  const sideVersion = (layer: UpperSnapshot, key: string, signal: AbortSignal | undefined) => layerVersion(lower, layer, key, signal);
  const sideMode = (layer: UpperSnapshot, key: string, signal: AbortSignal | undefined) => layerMode(lower, layer, key, signal);
  const sideBytes = (layer: UpperSnapshot, key: string, signal: AbortSignal | undefined) => layerBytes(lower, layer, key, signal);

  async function changes(paths: readonly string[] | undefined, options: FsOpOptions = {}, given?: LayerSides): Promise<OverlayChange[]> {
    const { signal } = options;
    const roots = paths === undefined ? undefined : await settleAll(paths.map(async (p) => (await view.resolve(p, { signal })).targetKey));
    const within = (key: string) => roots === undefined || roots.some((r) => isWithin(r, key));
    const { base, now, live } = await sidesOf(given);
    const out: OverlayChange[] = [];
    for (const [key, before, after] of PMap.differences(base.entries, now.entries)) {
      throwIfAborted(signal, 'cannot list the changes against the parent');
      if (!within(key)) continue;
      const was = await sideVersion(base, key, signal);
      const is = await sideVersion(now, key, signal);
      const mode = is === undefined ? undefined : await sideMode(now, key, signal);
      const executable = mode === true ? true : undefined;
      if (was === is && (is === undefined || (await sideMode(base, key, signal)) === mode)) continue;
      const baseVersion = before?.base ?? after?.base;
      const size = after?.kind === 'file' ? after.bytes.byteLength : undefined;
      const kind = was === undefined ? 'added' : is === undefined ? 'deleted' : 'modified';
      const shown = { ...(is === undefined ? {} : { version: is }), ...(size === undefined ? {} : { size }), ...(executable ? { executable } : {}) };
      const link = after?.kind === 'link' ? { linkText: after.text } : {};
      out.push({ path: key, kind, type: isLinkVersion(is ?? was) ? 'link' : 'file', baseVersion, ...shown, ...link });
    }
    // Directories: a lower one removed in this attempt, and an empty one made in it.
    for (const [key, side] of PSet.differences(base.opaque, now.opaque)) {
      if (side === 'right' && within(key)) out.push({ path: key, kind: now.dirs.has(key) ? 'modified' : 'deleted', type: 'directory', baseVersion: undefined });
    }
    for (const [key, side] of PSet.differences(base.dirs, now.dirs)) {
      if (!within(key) || now.opaque.has(key) !== base.opaque.has(key)) continue;
      const below = live ? state.hasDescendant(key) : holdsBelow(now, key);
      if (side === 'right' && !below) out.push({ path: key, kind: 'added', type: 'directory', baseVersion: undefined });
      if (side === 'left' && !(await showsDirectory(now, live, key, signal))) {
        out.push({ path: key, kind: 'deleted', type: 'directory', baseVersion: undefined });
      }
    }
    const rank = (c: OverlayChange) => (c.kind === 'deleted' ? 0 : 1);
    return out.sort((a, b) => compareNames(a.path, b.path) || rank(a) - rank(b));
  }

  async function diff(paths: readonly string[] | undefined, options: FsOpOptions = {}, given?: LayerSides): Promise<string> {
    const { signal } = options;
    const sides = await sidesOf(given);
    const { base, now } = sides;
    const { fileDiff } = await fileDiffs();
    let out = '';
    for (const change of await changes(paths, options, sides)) {
      if (change.type === 'directory') continue;
      const modes = { before: await sideMode(base, change.path, signal), after: await sideMode(now, change.path, signal) };
      out += fileDiff(displayName(rootKey, change.path), await sideBytes(base, change.path, signal), await sideBytes(now, change.path, signal), modes);
    }
    return out;
  }

  return { changes, diff };
}

/** What a layer's view over `lower` shows at `key`: an upper file's version, nothing, or the lower's file. */
async function layerVersion(lower: FileSystem, layer: UpperSnapshot, key: string, signal: AbortSignal | undefined): Promise<FsVersion | undefined> {
  const e = layer.entries.get(key);
  if (e) return e.kind === 'file' ? e.version : e.kind === 'link' ? linkVersion(e.text) : undefined;
  if (hiddenIn(layer.opaque, key)) return undefined;
  const info = await lowerStat(lower, pathTarget(key), signal);
  return info?.type === 'file' ? info.version : undefined;
}

/** A layer's executable bit at `key`, where its view has a file there. */
async function layerMode(lower: FileSystem, layer: UpperSnapshot, key: string, signal: AbortSignal | undefined): Promise<boolean | 'link' | undefined> {
  const e = layer.entries.get(key);
  if (e) return e.kind === 'file' ? e.executable === true : e.kind === 'link' ? 'link' : undefined;
  if (hiddenIn(layer.opaque, key)) return undefined;
  const info = await lowerStat(lower, pathTarget(key), signal);
  return info?.type === 'file' ? info.executable === true : undefined;
}

/** The bytes a layer's view shows at `key` (a link's text for a link), or undefined. */
async function layerBytes(lower: FileSystem, layer: UpperSnapshot, key: string, signal: AbortSignal | undefined): Promise<Uint8Array | undefined> {
  const e = layer.entries.get(key);
  if (e) return e.kind === 'file' ? e.bytes : e.kind === 'link' ? Buffer.from(e.text) : undefined;
  if (hiddenIn(layer.opaque, key)) return undefined;
  try {
    return (await lowerFile(lower, pathTarget(key), `cannot diff "${key}"`, signal))?.bytes;
  } catch (err) {
    if (!isFsError(err, 'FS_NOT_REGULAR_FILE')) throw err;
    return undefined;
  }
}

/** Two upper layers to compare; `live` when `now` is the overlay's layer now. */
export interface LayerSides {
  readonly base: UpperSnapshot;
  readonly now: UpperSnapshot;
  readonly live: boolean;
}

/** The two layers compared: `given` (two checkpoints, or one and now), else the parent at the fork and now. */
async function sidesFor(state: OverlayCore['state'], given: LayerSides | undefined): Promise<LayerSides> {
  if (given) return given;
  // An overlay that is no fork is compared with an empty layer: the lower itself.
  const base = (await state.base()) ?? { entries: PMap.empty<UpperEntry>(), dirs: PSet.empty(), opaque: PSet.empty() };
  return { base, now: state.snapshot(), live: true };
}

/** True when the view of `layer` has a directory at `key` (the live view: asked of the overlay itself). */
async function showsDirectoryIn(
  core: OverlayCore,
  view: FileSystem,
  layer: UpperSnapshot,
  live: boolean,
  key: string,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  if (live) return (await view.stat(pathTarget(key), { signal })) !== undefined;
  if (layer.dirs.has(key) || holdsBelow(layer, key)) return true;
  if (hiddenIn(layer.opaque, key)) return false;
  return (await lowerStat(core.lower, pathTarget(key), signal))?.type === 'directory';
}

/** True when `layer` holds a file or link, or made a directory, strictly below `key` (a scan: for past layers only). */
function holdsBelow(layer: UpperSnapshot, key: string): boolean {
  const prefix = key === '/' ? '/' : `${key}/`;
  for (const [k, e] of layer.entries) if (e.kind !== 'whiteout' && k.startsWith(prefix)) return true;
  for (const d of layer.dirs) if (d.startsWith(prefix)) return true;
  return false;
}

function hiddenIn(opaque: PSet, key: string): boolean {
  if (opaque.size === 0) return false;
  for (let k = key; ; k = posix.dirname(k)) {
    if (opaque.has(k)) return true;
    if (k === '/') return false;
  }
}

function displayName(rootKey: string, key: string): string {
  const rel = posix.relative(rootKey, key);
  return rel === '' || rel === '..' || rel.startsWith('../') ? key.replace(/^\/+/, '') : rel;
}
