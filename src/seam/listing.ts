import { FsError } from './errors.js';
import { compareNames } from './resolve.js';
import { directoryVersion } from './version.js';
import { FsVersion, UNVERSIONED, type FsInfo, type FsTarget } from './types.js';
import type { FsProvider, FsProviderInfo } from './provider.js';

/**
 * Listing order, decided here for every backend: names in code-point order. A listing that is in
 * order already (most stores keep one) is returned as it is.
 */
export function inListingOrder<T extends { readonly name: string }>(entries: T[]): T[] {
  for (let i = 1; i < entries.length; i++) {
    if (compareNames(entries[i - 1]!.name, entries[i]!.name) > 0) return entries.sort((a, b) => compareNames(a.name, b.name));
  }
  return entries;
}

/**
 * Tree order of relative paths: segment by segment in code-point order, so `a/b` sorts before
 * `a-c`. The same as comparing the whole strings with `/` below every other character (no name
 * holds one), which needs no split.
 */
export function comparePaths(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x === SLASH) return -1;
    if (y === SLASH) return 1;
    if ((x & 0xf800) === 0xd800 || (y & 0xf800) === 0xd800) return segmentwise(a, b);
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

const SLASH = 0x2f;

function segmentwise(a: string, b: string): number {
  const sa = a.split('/');
  const sb = b.split('/');
  const n = Math.min(sa.length, sb.length);
  for (let i = 0; i < n; i++) {
    const c = compareNames(sa[i]!, sb[i]!);
    if (c !== 0) return c;
  }
  return sa.length - sb.length;
}

/**
 * Walk order (D4) of a whole tree given at once, in any order: each directory's entries by name,
 * each followed by what is below it. A tree in order already is returned as it is.
 */
/** The indices of `paths` in walk order, or undefined when they are in it already. */
export function walkOrderOf(paths: readonly string[]): number[] | undefined {
  for (let i = 1; i < paths.length; i++) {
    if (comparePaths(paths[i - 1]!, paths[i]!) > 0) return Array.from(paths, (_, j) => j).sort((a, b) => comparePaths(paths[a]!, paths[b]!));
  }
  return undefined;
}

export function inWalkOrder<T extends { readonly path: string }>(entries: T[]): T[] {
  for (let i = 1; i < entries.length; i++) {
    if (comparePaths(entries[i - 1]!.path, entries[i]!.path) > 0) return entries.sort((a, b) => comparePaths(a.path, b.path));
  }
  return entries;
}

/**
 * What `stat` reports, the version minted here for what is not a file: a directory's from its
 * entries' names (one formula for every backend), `other` for anything else; with `versioned`
 * false, no version at all (UNVERSIONED) and nothing hashed or listed.
 */
export async function withVersion(
  provider: FsProvider,
  target: FsTarget,
  info: FsProviderInfo,
  versioned: boolean,
  signal: AbortSignal | undefined,
): Promise<FsInfo | undefined> {
  const { version, ...rest } = info;
  if (!versioned) return { ...rest, version: UNVERSIONED };
  if (info.type === 'other') return { ...rest, version: FsVersion('other') };
  if (info.type === 'file') {
    if (version === undefined) throw new FsError('FS_IO_ERROR', `cannot stat "${target.displayPath}": the provider gave no version for a file`);
    return { ...rest, version };
  }
  try {
    const names = (await provider.listDir(target, { signal, stats: false })).map((e) => e.name);
    return { ...rest, version: directoryVersion(names) };
  } catch (err) {
    // Removed, or replaced by a file, between the two calls: say what is there now.
    if (err instanceof FsError && (err.code === 'FS_NOT_FOUND' || err.code === 'FS_NOT_DIRECTORY')) {
      const now = await provider.stat(target, { signal });
      return now === undefined || now.type === 'directory' ? undefined : withVersion(provider, target, now, versioned, signal);
    }
    throw err;
  }
}
