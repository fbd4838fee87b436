/**
 * A grep narrowed by its store. When the provider can say which files of the searched tree
 * hold a literal every match contains, the files it leaves out are passed over unread; the walk,
 * its order, ignore rules, caps and the matching itself are the same as without it. A file the
 * search would report as skipped (too large, not text) is always among the candidates, so the
 * skips are the same too.
 */
import type { FileSystem, FsTarget, FsTargetKey } from '../seam/index.js';
import { requiredLiteral } from './literal.js';

export interface Narrowed {
  readonly top: FsTarget;
  readonly keys: ReadonlySet<FsTargetKey>;
}

/** The store's candidates for `re` below the directory `top`, or undefined when it cannot narrow. */
export async function narrowing(
  fs: FileSystem,
  top: FsTarget,
  re: RegExp,
  maxFileBytes: number,
  signal: AbortSignal | undefined,
): Promise<Narrowed | undefined> {
  if (fs.searchCandidates === undefined) return undefined;
  const contains = requiredLiteral(re);
  if (contains === undefined) return undefined;
  const keys = await fs.searchCandidates(top, { contains, alsoLargerThan: maxFileBytes }, signal ? { signal } : {});
  return keys === undefined ? undefined : { top, keys };
}

/** A file the store said does not hold the literal (one of its subtree, not among its keys). */
export function cannotMatch(fs: FileSystem, narrowed: Narrowed | undefined, file: FsTarget): boolean {
  return narrowed !== undefined && fs.contains(narrowed.top, file) && !narrowed.keys.has(file.targetKey);
}
