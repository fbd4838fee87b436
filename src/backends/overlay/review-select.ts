import { posix } from 'node:path';
import { FsError, isWithin } from '../../seam/index.js';
import type { UpperState } from './state.js';
import type { ReviewContext } from './review-context.js';
import type { OverlayChange } from './review-types.js';

/** Roots selected by `paths`: each path selects itself and everything beneath it. */
export async function selectionRoots(
  ctx: ReviewContext,
  paths: readonly string[] | undefined,
  signal: AbortSignal | undefined,
): Promise<string[] | undefined> {
  if (paths === undefined) return undefined;
  if (!Array.isArray(paths)) throw new FsError('FS_INVALID_ARGUMENT', 'paths must be an array of strings');
  const roots: string[] = [];
  for (const p of paths) roots.push((await ctx.view.resolve(p, { signal })).targetKey);
  return roots;
}

export const within = (roots: readonly string[] | undefined, key: string) => roots === undefined || roots.some((r) => isWithin(r, key));
/** A change is selected by its path or, for a rename, by where it came from. */
export const picks = (roots: readonly string[] | undefined, c: OverlayChange) => within(roots, c.path) || (c.from !== undefined && within(roots, c.from));

/**
 * The changes a commit of `roots` takes: those selected, plus (until nothing is added) the other
 * end of a selected rename and a removed directory above anything that appears in it, which
 * must reach the lower first.
 */
export function commitSelection(state: UpperState, all: OverlayChange[], roots: string[] | undefined): OverlayChange[] {
  if (roots === undefined) return all;
  const grown = [...roots];
  for (let added = true; added; ) {
    added = false;
    const add = (key: string) => {
      if (!within(grown, key)) {
        grown.push(key);
        added = true;
      }
    };
    for (const c of all) {
      if (!picks(grown, c)) continue;
      if (c.from !== undefined) add(c.from);
      add(c.path);
      if (c.kind !== 'deleted') {
        const top = topRemovedAbove(state, c.path, c.type === 'directory');
        if (top !== undefined) add(top);
      }
    }
  }
  return all.filter((c) => picks(grown, c));
}

/** The outermost removed lower directory above `key` (or at it, when `self`). */
function topRemovedAbove(state: UpperState, key: string, self: boolean): string | undefined {
  let top: string | undefined;
  for (let d = self ? key : posix.dirname(key); ; d = posix.dirname(d)) {
    if (state.opaque.has(d)) top = d;
    if (d === '/' || d === '.') return top;
  }
}
