import { isAbsolute, relative, sep } from 'node:path';

/**
 * `child` relative to `parent` when it lies inside it (`''` for `parent` itself), else undefined.
 * Compares whole segments: `..foo` and `..state` are names inside, not a way up.
 */
export function relativeInside(parent: string, child: string): string | undefined {
  const rel = relative(parent, child);
  if (isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`)) return undefined;
  return rel;
}
