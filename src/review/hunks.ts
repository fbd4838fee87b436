import { createHash } from 'node:crypto';
import { structuredPatch } from 'diff';
import type { ReviewHunk } from './types.js';

// A text file's change as hunks, git's way (3 lines of context, split where git splits), and the
// file made from its base with any subset of them. No CLI, no sandbox: merge reuses it.

/** git's default context. */
export const CONTEXT_LINES = 3;

/** A hunk with where it lies in both sides' lines (0-based indexes, as `splitLines` counts). */
export interface TextHunk extends ReviewHunk {
  readonly oldIndex: number;
  readonly newIndex: number;
}

/**
 * Lines as the diff counts them: each ends after its '\n' (a '\r' before it is part of the
 * line, as in git); the last may have no newline. An empty text has no lines.
 */
export function splitLines(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\n)/);
}

/** The hunks from `before` to `after`, each with its stable id (see `hunkId`). */
export function textHunks(path: string, before: string, after: string): TextHunk[] {
  const patch = structuredPatch('a', 'b', before, after, undefined, undefined, { context: CONTEXT_LINES });
  const seen = new Map<string, number>();
  return patch.hunks.map((h) => {
    const lines = [...h.lines];
    const body = lines.join('\n');
    // Identical hunks in one file are told apart by their order.
    const nth = seen.get(body) ?? 0;
    seen.set(body, nth + 1);
    // As git writes them: a side with no lines starts at the line before (0 for an empty file).
    const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
    const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart;
    return {
      id: hunkId(path, lines, nth),
      oldStart,
      oldLines: h.oldLines,
      newStart,
      newLines: h.newLines,
      lines,
      oldIndex: h.oldStart - 1,
      newIndex: h.newStart - 1,
    };
  });
}

/** Derived from the path and the hunk's lines (not where it lies), so edits elsewhere leave it. */
export function hunkId(path: string, lines: readonly string[], nth = 0): string {
  return digest(['hunk', path, String(nth), ...lines]);
}

/** The id of a whole-file decision: the path and what the change is. */
export function fileId(path: string, parts: readonly string[]): string {
  return digest(['file', path, ...parts]);
}

function digest(parts: readonly string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(`${p.length}:${p}`);
  return h.digest('hex').slice(0, 12);
}

/**
 * `before` with exactly the hunks `pick` selects applied. Hunks never overlap on either side, so
 * any subset applies cleanly: between them both sides hold the same lines.
 */
export function applyHunks(before: string, after: string, hunks: readonly TextHunk[], pick: (hunk: TextHunk) => boolean): string {
  const a = splitLines(before);
  const b = splitLines(after);
  const out: string[] = [];
  let at = 0;
  for (const h of hunks) {
    if (!pick(h)) continue;
    out.push(...a.slice(at, h.oldIndex), ...b.slice(h.newIndex, h.newIndex + h.newLines));
    at = h.oldIndex + h.oldLines;
  }
  out.push(...a.slice(at));
  return out.join('');
}

/** The lines of the agent's file a hunk changed, as a reader counts them: '12', '12-15'. */
export function changedLines(hunk: ReviewHunk): string {
  let line = hunk.newLines === 0 ? hunk.newStart + 1 : hunk.newStart;
  let first: number | undefined;
  let last: number | undefined;
  for (const l of hunk.lines) {
    if (l.startsWith('+')) {
      first ??= line;
      last = line;
    }
    if (l.startsWith('+') || l.startsWith(' ')) line++;
    // A removal only: where the removed lines were.
    if (l.startsWith('-') && first === undefined) first = undefined;
  }
  if (first === undefined || last === undefined) {
    const at = removalPoint(hunk);
    return String(at);
  }
  return first === last ? String(first) : `${first}-${last}`;
}

/** The line of the agent's file where a hunk that only removes lines removed them. */
function removalPoint(hunk: ReviewHunk): number {
  let line = hunk.newLines === 0 ? hunk.newStart + 1 : hunk.newStart;
  for (const l of hunk.lines) {
    if (l.startsWith('-')) return line;
    if (l.startsWith(' ')) line++;
  }
  return line;
}
