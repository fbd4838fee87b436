import { posix } from 'node:path';
import { relativeInside } from '../seam/path.js';
import { compareNames } from '../seam/resolve.js';

/**
 * Tree order: paths compared segment by segment in code-point order, so `a/b` sorts before
 * `a-c` (the order of a depth-first walk over name-sorted listings, which is `walk`'s order).
 */
export function comparePaths(a: string, b: string): number {
  if (a === b) return 0;
  const sa = a.split('/');
  const sb = b.split('/');
  const n = Math.min(sa.length, sb.length);
  for (let i = 0; i < n; i++) {
    const c = compareNames(sa[i]!, sb[i]!);
    if (c !== 0) return c;
  }
  return sa.length - sb.length;
}

/** `path` relative to `dir` when inside it (`.` for `dir` itself), else undefined. */
export function relativeTo(dir: string, path: string): string | undefined {
  if (path === dir) return '.';
  const rel = relativeInside(dir, path);
  return rel === undefined ? undefined : posix.normalize(rel);
}
