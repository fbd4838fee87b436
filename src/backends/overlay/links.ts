import { posix } from 'node:path';
import {
  FsError,
  FsVersion,
  contentVersion,
  isFsError,
  isWithin,
  type FsDirEntry,
  type FsProviderInfo,
  type FsProvider,
  type FsTarget,
} from '../../seam/index.js';
import { resolveLinks, type NodeKind } from '../../seam/resolve.js';
import { TREE_LOCK, hasUpperDescendant, isHidden, lowerStat, pathTarget, type OverlayCore } from './core.js';
import type { UpperEntry, UpperLink } from './state.js';

/**
 * The version of a link, made from its text: what a change's `base` holds when the lower had a
 * link there, so commit can tell that link from a file and see whether it changed.
 */
export function linkVersion(text: string): FsVersion {
  return FsVersion(`link:${contentVersion(Buffer.from(text))}`);
}

export function isLinkVersion(version: FsVersion | undefined): boolean {
  return version !== undefined && version.startsWith('link:');
}

/** What is at a name, its last component not followed: a link with its text, or another kind. */
export type OwnKind = { readonly kind: 'link'; readonly text: string } | { readonly kind: Exclude<NodeKind, 'link'> };

/** The lower's entry at `key` itself: its link text when it is a link, else its kind. */
export async function lowerOwn(core: OverlayCore, key: string, signal: AbortSignal | undefined): Promise<OwnKind> {
  const { lower } = core;
  if (lower.readlink !== undefined && key !== core.rootKey) {
    try {
      return { kind: 'link', text: await lower.readlink(pathTarget(key), { signal }) };
    } catch (err) {
      if (isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY')) return { kind: 'missing' };
      if (!isFsError(err, 'FS_INVALID_ARGUMENT') && !isFsError(err, 'FS_UNSUPPORTED')) throw err;
    }
  }
  const info = await lowerStat(lower, pathTarget(key), signal);
  return { kind: info === undefined ? 'missing' : info.type };
}

/** What the lower holds at `key` as a change's base: a file's version, a link's, or nothing. */
export async function lowerBase(core: OverlayCore, key: string, signal: AbortSignal | undefined): Promise<FsVersion | undefined> {
  if (isHidden(core.state, key)) return undefined;
  const own = await lowerOwn(core, key, signal);
  if (own.kind === 'link') return linkVersion(own.text);
  if (own.kind !== 'file') return undefined;
  return (await lowerStat(core.lower, pathTarget(key), signal))?.version;
}

/** The view's entry at `key` itself (the upper first, then the lower where it shows). */
export async function viewOwn(core: OverlayCore, key: string, signal: AbortSignal | undefined): Promise<OwnKind> {
  const { state } = core;
  const entry = state.entries.get(key);
  if (entry?.kind === 'link') return { kind: 'link', text: entry.text };
  if (entry?.kind === 'file') return { kind: 'file' };
  if (state.dirs.has(key)) return { kind: 'directory' };
  const implied = hasUpperDescendant(state, key) ? ({ kind: 'directory' } as const) : ({ kind: 'missing' } as const);
  if (entry !== undefined || isHidden(state, key)) return implied;
  const own = await lowerOwn(core, key, signal);
  return own.kind === 'missing' ? implied : own;
}

/**
 * Resolves `path` over the view, following the upper's links as well as the lower's. Used only
 * while the upper holds links: it asks the lower about each component, where the lower's own
 * resolve answers in one call.
 */
export async function resolveInView(core: OverlayCore, path: string, signal: AbortSignal | undefined): Promise<string> {
  const { rootKey } = core;
  const root = core.lower.root;
  // Paths under the root as the caller names it, in the lower's key space.
  const start = root !== undefined && root !== rootKey && isWithin(root, path) ? posix.join(rootKey, path.slice(root.length)) : path;
  const key = await resolveLinks(start, {
    kind: async (p) => (isWithin(rootKey, p) ? (await viewOwn(core, p, signal)).kind : isWithin(p, rootKey) ? 'directory' : 'missing'),
    readlink: async (p) => {
      const own = await viewOwn(core, p, signal);
      return own.kind === 'link' ? own.text : '';
    },
  });
  if (!isWithin(rootKey, key)) throw new FsError('FS_OUTSIDE_ROOT', `"${path}" leads through a symbolic link to "${key}", outside the root`);
  return key;
}

/** A listing's entry for an upper link: typed by what it leads to (P4), `other` when that is nothing. */
export async function upperLinkEntry(
  core: OverlayCore,
  stat: FsProvider['stat'],
  dir: FsTarget,
  name: string,
  signal: AbortSignal | undefined,
): Promise<FsDirEntry> {
  const displayPath = posix.join(dir.displayPath, name);
  const own = posix.join(dir.targetKey, name);
  const key = await resolveInView(core, own, signal).catch(() => undefined);
  const target = { targetKey: pathTarget(key ?? own).targetKey, displayPath };
  const kind = key === undefined || key === own ? 'missing' : (await viewOwn(core, key, signal)).kind;
  // A directory is not stat'ed: its version lists it, and a link to `.` would list forever.
  if (kind === 'directory') return { name, type: 'directory', target };
  const info: FsProviderInfo | undefined = kind === 'file' ? await stat(target, { signal }).catch(() => undefined) : undefined;
  if (info === undefined) return { name, type: 'other', target };
  return { name, type: info.type, target, ...(info.size === undefined ? {} : { size: info.size }), ...(info.executable === undefined ? {} : { executable: info.executable }) };
}

/** The upper entry a link leaves behind at `key` when it goes: a whiteout where the lower has something. */
async function leftBehind(core: OverlayCore, key: string, signal: AbortSignal | undefined): Promise<UpperEntry | undefined> {
  const entry = core.state.entries.get(key);
  const base = entry !== undefined ? entry.base : await lowerBase(core, key, signal);
  if (base !== undefined) return { kind: 'whiteout', base };
  const below = isHidden(core.state, key) ? { kind: 'missing' } : await lowerOwn(core, key, signal);
  return below.kind === 'missing' ? undefined : { kind: 'whiteout', base: undefined };
}

/** The directory a new name at `key` goes in must be one in the view. */
async function checkParent(core: OverlayCore, key: string, what: string, signal: AbortSignal | undefined): Promise<void> {
  const parent = await viewOwn(core, posix.dirname(key), signal);
  if (parent.kind === 'missing') throw new FsError('FS_NOT_FOUND', `${what}: the parent directory does not exist`);
  if (parent.kind !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `${what}: the parent is not a directory`);
}

/** K1 and K2 in the overlay: links are upper entries; a lower link removed or moved leaves a whiteout. */
export function createOverlayLinks(core: OverlayCore): Required<Pick<FsProvider, 'symlink' | 'readlink' | 'removeLink' | 'renameLink'>> {
  const { state, lock } = core;
  const baseAt = async (key: string, signal: AbortSignal | undefined) => {
    const entry = state.entries.get(key);
    return entry !== undefined ? entry.base : lowerBase(core, key, signal);
  };
  return {
    symlink(target, text, { signal }) {
      const key = target.targetKey;
      const what = `cannot create the link "${target.displayPath}"`;
      return lock.run(key, () =>
        lock.run(TREE_LOCK, async () => {
          await checkParent(core, key, what, signal);
          if ((await viewOwn(core, key, signal)).kind !== 'missing') throw new FsError('FS_ALREADY_EXISTS', `${what}: something is already there`);
          const link: UpperLink = { kind: 'link', text, base: await baseAt(key, signal) };
          await state.apply({ entries: [[key, link]] });
        }),
      );
    },

    async readlink(target, { signal }) {
      const what = `cannot read the link "${target.displayPath}"`;
      const own = await viewOwn(core, target.targetKey, signal);
      if (own.kind === 'link') return own.text;
      throw new FsError(own.kind === 'missing' ? 'FS_NOT_FOUND' : 'FS_INVALID_ARGUMENT', `${what}: ${own.kind === 'missing' ? 'not found' : 'not a symbolic link'}`);
    },

    removeLink(target, { signal }) {
      const key = target.targetKey;
      const what = `cannot remove the link "${target.displayPath}"`;
      return lock.run(key, async () => {
        const own = await viewOwn(core, key, signal);
        if (own.kind !== 'link') throw new FsError(own.kind === 'missing' ? 'FS_NOT_FOUND' : 'FS_INVALID_ARGUMENT', `${what}: ${own.kind === 'missing' ? 'not found' : 'not a symbolic link'}`);
        await state.apply({ entries: [[key, await leftBehind(core, key, signal)]] });
      });
    },

    renameLink(from, to, { replace, signal }) {
      const [a, b] = [from.targetKey, to.targetKey].sort();
      const what = `cannot move the link "${from.displayPath}" to "${to.displayPath}"`;
      const move = () =>
        lock.run(TREE_LOCK, async () => {
          const own = await viewOwn(core, from.targetKey, signal);
          if (own.kind !== 'link') throw new FsError(own.kind === 'missing' ? 'FS_NOT_FOUND' : 'FS_INVALID_ARGUMENT', `${what}: the source is ${own.kind === 'missing' ? 'missing' : 'not a symbolic link'}`);
          if (from.targetKey === to.targetKey) return;
          await checkParent(core, to.targetKey, what, signal);
          const there = await viewOwn(core, to.targetKey, signal);
          if (there.kind !== 'missing' && !replace) throw new FsError('FS_ALREADY_EXISTS', `${what}: the destination exists`);
          if (there.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the destination is a directory`);
          const link: UpperLink = { kind: 'link', text: own.text, base: await baseAt(to.targetKey, signal) };
          await state.apply({ entries: [[from.targetKey, await leftBehind(core, from.targetKey, signal)], [to.targetKey, link]] });
        });
      return a === b ? lock.run(a!, move) : lock.run(a!, () => lock.run(b!, move));
    },
  };
}
