import { posix } from 'node:path';
import { relativeInside } from '../seam/path.js';

export { comparePaths } from '../seam/listing.js';

/** `path` relative to `dir` when inside it (`.` for `dir` itself), else undefined. */
export function relativeTo(dir: string, path: string): string | undefined {
  if (path === dir) return '.';
  const rel = relativeInside(dir, path);
  return rel === undefined ? undefined : posix.normalize(rel);
}
