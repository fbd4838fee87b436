import { FsError } from '../seam/index.js';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { holdsMarkers } from '../backends/overlay/commit-markers.js';
import { upperStateOf } from '../backends/overlay/compose.js';
import { linesOf, MARKERS } from './merge-lines.js';

export { holdsMarkers };

const isMarker = (line: string, marker: string) => line.replace(/\r?\n$/, '') === marker;

/**
 * Resolves every marker block of `text` by taking one side's lines (`ours`: the side merged into).
 * The inverse of writing the markers, except where a conflicting side's last line had no line
 * break: the block gave it one.
 */
export function resolveMarkers(text: string, take: 'ours' | 'base' | 'theirs', names = { ours: 'parent', theirs: 'fork' }): string {
  const m = { ours: `<<<<<<< ${names.ours}`, base: MARKERS.base, split: MARKERS.split, theirs: `>>>>>>> ${names.theirs}` };
  const out: string[] = [];
  let section: 'out' | 'ours' | 'base' | 'theirs' = 'out';
  for (const line of linesOf(text)) {
    if (section === 'out' && isMarker(line, m.ours)) section = 'ours';
    else if (section === 'ours' && isMarker(line, m.base)) section = 'base';
    else if (section === 'base' && isMarker(line, m.split)) section = 'theirs';
    else if (section === 'theirs' && isMarker(line, m.theirs)) section = 'out';
    else if (section === 'out' || section === take) out.push(line);
  }
  return out.join('');
}

/** The changed files of `overlay` (at or below `paths`) that hold conflict markers: `status` shows them, `commit` refuses them. */
export async function conflicted(overlay: OverlayFileSystem, paths?: readonly string[]): Promise<string[]> {
  const state = upperStateOf(overlay);
  if (state === undefined) throw new FsError('FS_INVALID_ARGUMENT', 'conflicted takes an overlay (createOverlayFs)');
  const out: string[] = [];
  for (const c of await overlay.changes(paths)) {
    const e = state.entries.get(c.path);
    if (e?.kind === 'file' && holdsMarkers(e.bytes)) out.push(c.path);
  }
  return out;
}
