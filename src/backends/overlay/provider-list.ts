import { posix } from 'node:path';
import {
  FsError,
  FsTargetKey,
  isFsError,
  throwIfAborted,
  type FsDirEntry,
  type FsTarget,
} from '../../seam/index.js';
import { isHidden, hasUpperDescendant, isChild, pathTarget } from './core.js';
import type { UpperFile } from './state.js';
import { upperLinkEntry } from './links.js';
import type { OverlayProviderContext } from './provider-context.js';

/** The lower's entries of a directory the view shows, or none where the overlay hides or replaced it. */
async function lowerEntriesOf(ctx: OverlayProviderContext, target: FsTarget, what: string, signal: AbortSignal | undefined, stats: boolean): Promise<FsDirEntry[]> {
  const { lower, state } = ctx;
  const key = target.targetKey;
  const own = state.entries.get(key);
  if (own?.kind === 'file') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
  const madeHere = state.dirs.has(key);
  if (own && !madeHere) throw new FsError('FS_NOT_FOUND', `${what}: not found`);

  let lowerEntries: FsDirEntry[] = [];
  if (!own && isHidden(state, key)) {
    if (!madeHere && !hasUpperDescendant(state, key)) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  } else if (!own) {
    try {
      lowerEntries = await lower.listDir(target, stats ? { signal } : { signal, stats });
    } catch (err) {
      const absent = isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY');
      if (!(absent && (madeHere || hasUpperDescendant(state, key)))) throw err;
    }
  }
  return lowerEntries;
}

/** A lower symlink's entry: its type is whatever the view holds at the link's target. */
function lowerLinkEntry(ctx: OverlayProviderContext, dir: FsTarget, e: FsDirEntry): FsDirEntry {
  const { state } = ctx;
  const linked = state.entries.get(e.target.targetKey);
  const cut = isHidden(state, e.target.targetKey);
  const display = { ...e.target, displayPath: posix.join(dir.displayPath, e.name) };
  if (linked?.kind === 'file') {
    return { name: e.name, type: 'file', target: display, size: linked.bytes.byteLength, mtimeMs: linked.mtimeMs, executable: linked.executable === true };
  }
  if (state.dirs.has(e.target.targetKey)) return { name: e.name, type: 'directory', target: display };
  if (linked || (cut && !hasUpperDescendant(state, e.target.targetKey))) return { name: e.name, type: 'other', target: display };
  if (cut) return { name: e.name, type: 'directory', target: display };
  return { ...e, target: display };
}

/** The view's entries of a directory; without `stats`, the lower's may lack size and time (the hint passed on). */
export async function listMerged(ctx: OverlayProviderContext, target: FsTarget, signal: AbortSignal | undefined, stats = true): Promise<FsDirEntry[]> {
  const { state } = ctx;
  const key = target.targetKey;
  const what = `cannot list "${target.displayPath}"`;
  const lowerEntries = await lowerEntriesOf(ctx, target, what, signal, stats);

  const entries = state.entries;
  const out: FsDirEntry[] = [];
  const seen = new Set<string>();
  // Upper links, typed by what they lead to once the scans are done.
  const links: string[] = [];
  // A listed name is one plain segment, so a child's key and display path are a prefix and the name.
  const prefix = key === '/' ? '/' : `${key}/`;
  const shown = posix.join(target.displayPath, '_').slice(0, -1);
  const entryFor = (name: string, childKey: string, file: UpperFile | undefined): FsDirEntry => ({
    name,
    type: file ? 'file' : 'directory',
    target: { targetKey: FsTargetKey(childKey), displayPath: shown + name },
    ...(file ? { size: file.bytes.byteLength, mtimeMs: file.mtimeMs, executable: file.executable === true } : {}),
  });
  // Nothing of the upper directly here (the common case, an untouched directory): no lookups in it, no scan of it.
  const upper = state.hasChild(key);

  for (const e of lowerEntries) {
    seen.add(e.name);
    const childKey = prefix + e.name;
    const child = upper ? entries.get(childKey) : undefined;
    if (child?.kind === 'file') out.push(entryFor(e.name, childKey, child));
    else if (child?.kind === 'link') links.push(e.name);
    else if (upper && state.dirs.has(childKey)) out.push(entryFor(e.name, childKey, undefined));
    else if (child || (upper && state.opaque.has(childKey))) continue; // whited out, or a removed directory
    else if (e.target.targetKey !== childKey) out.push(lowerLinkEntry(ctx, target, e));
    else out.push(e.target.displayPath === shown + e.name ? e : { ...e, target: { ...e.target, displayPath: shown + e.name } });
  }

  // forEach: a whole-map scan, faster than iterating the persistent map.
  if (upper) entries.forEach((child, childKey) => {
    if (child.kind === 'whiteout' || !isChild(prefix, childKey)) return;
    const name = childKey.slice(prefix.length);
    if (!seen.has(name)) {
      seen.add(name);
      if (child.kind === 'link') links.push(name);
      else out.push(entryFor(name, childKey, child));
    }
  });
  for (const name of links) out.push(await upperLinkEntry(ctx, ctx.stat, target, name, signal));
  if (upper) for (const dir of state.dirs) {
    if (!isChild(prefix, dir)) continue;
    const name = dir.slice(prefix.length);
    if (!seen.has(name)) {
      seen.add(name);
      out.push(entryFor(name, dir, undefined));
    }
  }
  throwIfAborted(signal, what);
  return out;
}

/**
 * Everything the view has at and below a directory: its files and directories (real children
 * only), and anything else (symlinks, special files), by key. Directories come parents first.
 */
export async function viewTree(ctx: OverlayProviderContext, top: FsTarget, signal: AbortSignal | undefined) {
  const files: string[] = [];
  const dirs: string[] = [top.targetKey];
  const other: string[] = [];
  for (let i = 0; i < dirs.length; i++) {
    const dir = dirs[i]!;
    for (const e of await listMerged(ctx, pathTarget(dir), signal, false)) {
      const own = posix.join(dir, e.name);
      if (e.target.targetKey !== own || e.type === 'other') other.push(own);
      else if (e.type === 'directory') dirs.push(own);
      else files.push(own);
    }
  }
  return { files, dirs, other };
}
