/**
 * A grep narrowed by its store. When the provider can say which files of the searched tree
 * hold a literal every match contains, the files it leaves out are passed over unread; the walk,
 * its order, ignore rules, caps and the matching itself are the same as without it. A file the
 * search would report as skipped (too large, not text) is always among the candidates, so the
 * skips are the same too. The store may return the content of small candidates with its answer;
 * those are not read again (the seam checks them as a read would).
 */
import type { FileSystem, FsTarget, FsTargetKey } from '../seam/index.js';
import { requiredLiteral } from './literal.js';

export interface Narrowed {
  readonly top: FsTarget;
  readonly keys: ReadonlySet<FsTargetKey>;
  /** Whole contents of some candidates, from the same answer. */
  readonly contents: ReadonlyMap<FsTargetKey, Uint8Array> | undefined;
}

/** The contents asked with the candidates: small files only, and a bounded sum, so memory stays bounded. */
const CONTENTS_PER_FILE = 64 * 1024;
const CONTENTS_TOTAL = 8 * 1024 * 1024;

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
  const contents = { maxFileBytes: Math.min(maxFileBytes, CONTENTS_PER_FILE), maxTotalBytes: CONTENTS_TOTAL };
  const keys = await fs.searchCandidates(top, { contains, alsoLargerThan: maxFileBytes, contents }, signal ? { signal } : {});
  return keys === undefined ? undefined : { top, keys, contents: keys.contents };
}

/** The content the store returned for `file` with its candidates, if it did. */
export function givenContent(narrowed: Narrowed | undefined, file: FsTarget): Uint8Array | undefined {
  return narrowed?.contents?.get(file.targetKey);
}

/** A file the store said does not hold the literal (one of its subtree, not among its keys). */
export function cannotMatch(fs: FileSystem, narrowed: Narrowed | undefined, file: FsTarget): boolean {
  return narrowed !== undefined && fs.contains(narrowed.top, file) && !narrowed.keys.has(file.targetKey);
}
