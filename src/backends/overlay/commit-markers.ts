import { isUtf8 } from 'node:buffer';
import { isWithin, type FsOpOptions } from '../../seam/index.js';
import { hasUtf8Bom } from '../../seam/text.js';
import { conflict } from './problems.js';
import type { ReviewContext } from './review-context.js';
import { lazily } from '../../lazy.js';
import type { OverlayCommitOptions, OverlayCommitResult } from './review-types.js';

// Reading the markers of bytes (merge, status) needs none of the review; committing loads it.
const status = lazily(() => import('./review-status.js'));

// A file a merge left with conflict markers is not committed (even with `force`) while it holds
// them: the mark is the content itself, so it needs no record and ends when the markers do.

/** The marker lines a merge writes (git's, with these side names). */
export const CONFLICT_MARKERS = { open: '<<<<<<< ', base: '||||||| base', split: '=======', close: '>>>>>>> ' } as const;

/** True when `bytes` is UTF-8 text holding a whole marker block: open, base, split and close lines, in order. */
export function holdsMarkers(bytes: Uint8Array): boolean {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.indexOf(CONFLICT_MARKERS.split) === -1 || buf.indexOf(0) !== -1 || !isUtf8(buf)) return false;
  const text = buf.toString('utf8', hasUtf8Bom(bytes) ? 3 : 0);
  let stage = 0;
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (stage === 0 && line.startsWith(CONFLICT_MARKERS.open)) stage = 1;
    else if (stage === 1 && line === CONFLICT_MARKERS.base) stage = 2;
    else if (stage === 2 && line === CONFLICT_MARKERS.split) stage = 3;
    else if (stage === 3 && line.startsWith(CONFLICT_MARKERS.close)) return true;
  }
  return false;
}

/** The changed files (of `paths`) that hold conflict markers, in the upper now. */
export async function conflictedFiles(ctx: ReviewContext, paths: readonly string[] | undefined, options: FsOpOptions = {}): Promise<string[]> {
  const out: string[] = [];
  const { changes } = await status();
  for (const c of await changes(ctx, paths, options)) {
    const e = ctx.state.entries.get(c.path);
    if (e?.kind === 'file' && holdsMarkers(e.bytes)) out.push(c.path);
  }
  return out;
}

type Commit = (ctx: ReviewContext, paths: readonly string[] | undefined, options: OverlayCommitOptions) => Promise<OverlayCommitResult>;

/** `commit` of everything selected but the files holding conflict markers, which are reported as conflicts. */
export async function commitUnmarked(commit: Commit, ctx: ReviewContext, paths: readonly string[] | undefined, options: OverlayCommitOptions): Promise<OverlayCommitResult> {
  const marked = await conflictedFiles(ctx, paths, options);
  if (marked.length === 0) return commit(ctx, paths, options);
  // Everything else, by name; a directory change holding a marked file waits with it.
  const rest = new Set<string>();
  const { changes } = await status();
  for (const c of await changes(ctx, paths, options)) {
    for (const p of c.from === undefined ? [c.path] : [c.path, c.from]) {
      if (!marked.some((m) => isWithin(p, m))) rest.add(p);
    }
  }
  const refused = marked.map((p) => conflict(p, 'holds merge conflict markers: resolve them (and remove the marker lines) before committing'));
  const result: OverlayCommitResult = rest.size === 0 ? { committed: [], overwritten: [], conflicts: [], failed: [] } : await commit(ctx, [...rest], options);
  return { ...result, conflicts: [...result.conflicts, ...refused] };
}
