import { isFsError, throwIfAborted } from './errors.js';
import { pathChild } from './path.js';
import type { FsDirEntry, FsProvider, FsTarget, FsTargetKey, FsUsage } from './types.js';

// How much a name holds, as a quota counts it: bytes of regular files, and entries that are not
// directories (a file, a link, anything else) as one file each. A link holds no bytes of its own.

export const NOTHING: FsUsage = { bytes: 0, files: 0 };

export const plus = (a: FsUsage, b: FsUsage): FsUsage => ({ bytes: a.bytes + b.bytes, files: a.files + b.files });
export const minus = (a: FsUsage, b: FsUsage): FsUsage => ({ bytes: a.bytes - b.bytes, files: a.files - b.files });

/** One file of `size` bytes. */
export const oneFile = (size: number): FsUsage => ({ bytes: size, files: 1 });

function childKeyOf(provider: FsProvider, dir: FsTarget, name: string): FsTargetKey {
  return provider.childKey ? provider.childKey(dir, name) : (pathChild(dir.targetKey, name) as FsTargetKey);
}

/** A listing's entry: a link shows under a key other than its own name's. */
function entryFigures(provider: FsProvider, dir: FsTarget, entry: FsDirEntry): FsUsage | 'descend' {
  const own = entry.target.targetKey === childKeyOf(provider, dir, entry.name);
  if (!own) return oneFile(0);
  if (entry.type === 'directory') return 'descend';
  return oneFile(entry.type === 'file' ? (entry.size ?? 0) : 0);
}

/** Everything the view shows at and below the directory `dir` (listed, not read). */
export async function treeFigures(provider: FsProvider, dir: FsTarget, signal: AbortSignal | undefined): Promise<FsUsage> {
  let total = NOTHING;
  const pending: FsTarget[] = [dir];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    throwIfAborted(signal, 'cannot count the files under the quota');
    let entries: FsDirEntry[];
    try {
      entries = await provider.listDir(next, { signal, stats: true });
    } catch (err) {
      // Gone meanwhile, or unreadable: nothing there this filesystem could have written.
      if (next !== dir && (isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY') || isFsError(err, 'FS_PERMISSION_DENIED'))) continue;
      throw err;
    }
    for (const entry of entries) {
      const figures = entryFigures(provider, next, entry);
      if (figures === 'descend') pending.push(entry.target);
      else total = plus(total, figures);
    }
  }
  return total;
}

/** What the view shows at `target` (a file, a whole directory, or nothing), as the quota counts it. */
export async function viewFigures(provider: FsProvider, target: FsTarget, signal: AbortSignal | undefined): Promise<FsUsage> {
  let info;
  try {
    info = await provider.stat(target, { signal, unversioned: true });
  } catch (err) {
    if (isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY')) return NOTHING;
    throw err;
  }
  if (info === undefined) return NOTHING;
  if (info.type === 'directory') return treeFigures(provider, target, signal);
  return oneFile(info.type === 'file' ? (info.size ?? 0) : 0);
}

/** What the store counts at `target`: its own answer where it has one, else what the view shows. */
export function countedFigures(provider: FsProvider, target: FsTarget, signal: AbortSignal | undefined): Promise<FsUsage> {
  return provider.usage ? provider.usage(target, { signal }) : viewFigures(provider, target, signal);
}

/** The size as a person reads it: `1,000,000 bytes`, `1 file`. */
export function describeBytes(n: number): string {
  return `${n.toLocaleString('en-US')} byte${n === 1 ? '' : 's'}`;
}

export function describeFiles(n: number): string {
  return `${n.toLocaleString('en-US')} file${n === 1 ? '' : 's'}`;
}
