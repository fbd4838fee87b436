// Counting ignored changes needs none of the ignore rules' machinery (review-ignored.ts).
import { relativeInside } from '../../seam/path.js';
import type { OverlayChange, OverlayIgnoredReason } from './review-types.js';

/** One counted line of ignored changes: those below one top directory (or one file at the top). */
export interface OverlayIgnoredGroup {
  /** Relative to the root; a directory ends with `/` (`node_modules/`, `.git/`). */
  readonly path: string;
  readonly reason: OverlayIgnoredReason;
  /** How many changes it stands for. */
  readonly count: number;
}

/** The ignored changes counted per top directory below `root` (git's files apart), in path order. */
export function ignoredGroups(root: string, changes: readonly OverlayChange[]): OverlayIgnoredGroup[] {
  const groups = new Map<string, { path: string; reason: OverlayIgnoredReason; count: number }>();
  for (const c of changes) {
    if (c.ignored === undefined) continue;
    const rel = relativeInside(root, c.path) ?? c.path;
    const slash = rel.indexOf('/');
    const path = slash === -1 ? (c.type === 'directory' ? `${rel}/` : rel) : rel.slice(0, slash + 1);
    const id = `${c.ignored}\0${path}`;
    const group = groups.get(id);
    if (group) group.count++;
    else groups.set(id, { path, reason: c.ignored, count: 1 });
  }
  return [...groups.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
