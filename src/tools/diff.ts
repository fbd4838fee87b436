import { OMIT_HEADERS, formatPatch, structuredPatch, type StructuredPatch } from 'diff';
import { textProblem } from '../seam/index.js';

// The unified diff that write and edit put in their structured values for a UI to show; the
// model's text does not include it. Both sides come from the seam (writeText and editText with
// `withBytes`): the bytes the change replaced and those it published, so the diff is exactly
// the change, with no read of its own that another writer could race.

/** Largest diff text kept in a value (UTF-8 bytes); longer ones are cut at a line and flagged. */
export const MAX_DIFF_BYTES = 64 * 1024;
/** Files larger than this (either side) get no diff: computing one costs more than it shows. */
export const MAX_DIFF_INPUT_BYTES = 1024 * 1024;

export interface DiffFields {
  /** Unified diff of the change (`--- /dev/null` for a new file). */
  readonly diff?: string;
  /** The diff was cut at MAX_DIFF_BYTES. */
  readonly diffTruncated?: boolean;
}

const keepBom = new TextDecoder('utf-8', { ignoreBOM: true });
const empty = new Uint8Array();

/** The diff fields for a change from `before` (undefined: a new file) to `after`; none when either side is not text or too large. */
export function diffFields(path: string, before: Uint8Array | undefined, after: Uint8Array): DiffFields {
  if ((before?.byteLength ?? 0) > MAX_DIFF_INPUT_BYTES || after.byteLength > MAX_DIFF_INPUT_BYTES) return {};
  if (textProblem(before ?? empty) !== undefined || textProblem(after) !== undefined) return {};
  const from = before === undefined ? '/dev/null' : path;
  const [a, b] = [keepBom.decode(before ?? empty), keepBom.decode(after)];
  const hunks = blockDiff(a, b) ?? formatHunks(structuredPatch(from, path, a, b, undefined, undefined, { context: CONTEXT }));
  const text = hunks === '' ? '' : `--- ${from}\n+++ ${path}\n${hunks}`;
  return capDiff(text);
}

const CONTEXT = 3;

const formatHunks = (patch: StructuredPatch) => (patch.hunks.length === 0 ? '' : formatPatch(patch, OMIT_HEADERS));

/** Lines as jsdiff's line diff cuts them: each with its line break (LF or CRLF); no empty last line. */
function linesOf(text: string): string[] {
  const out: string[] = [];
  let at = 0;
  for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', at)) {
    out.push(text.slice(at, nl + 1));
    at = nl + 1;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/**
 * The hunks structuredPatch and formatPatch would give, written directly when they are provably
 * the same: an edit usually changes one block of lines, and jsdiff tokenizes and searches the
 * whole file (and costs more than the edit even for a few lines). After the common first lines P
 * and last lines S, the changed blocks are O (old) and N (new). When no line of O occurs in N or
 * S and no line of N in O or S, the only alignment of least edits is P, all of O removed, all of
 * N added, S; and jsdiff's search (common prefix first, then an addition preferred to a removal
 * at equal reach) yields exactly that order. Undefined otherwise (or when nothing changed).
 */
function blockDiff(a: string, b: string): string | undefined {
  const [A, B] = [linesOf(a), linesOf(b)];
  const m = Math.min(A.length, B.length);
  let p = 0;
  while (p < m && A[p] === B[p]) p++;
  if (p === A.length && p === B.length) return undefined;
  let s = 0;
  while (s < m - p && A[A.length - 1 - s] === B[B.length - 1 - s]) s++;
  const [oldEnd, newEnd] = [A.length - s, B.length - s];
  const oldBlock = new Set<string>();
  for (let i = p; i < oldEnd; i++) oldBlock.add(A[i]!);
  const newBlock = new Set<string>();
  for (let i = p; i < newEnd; i++) {
    if (oldBlock.has(B[i]!)) return undefined;
    newBlock.add(B[i]!);
  }
  for (let i = oldEnd; i < A.length; i++) if (oldBlock.has(A[i]!) || newBlock.has(A[i]!)) return undefined;
  const [before, after] = [Math.min(p, CONTEXT), Math.min(s, CONTEXT)];
  const out: string[] = [];
  const push = (mark: string, line: string) => out.push(line.endsWith('\n') ? mark + line.slice(0, -1) : `${mark}${line}\n\\ No newline at end of file`);
  for (let i = p - before; i < p; i++) push(' ', A[i]!);
  for (let i = p; i < oldEnd; i++) push('-', A[i]!);
  for (let i = p; i < newEnd; i++) push('+', B[i]!);
  for (let i = oldEnd; i < oldEnd + after; i++) push(' ', A[i]!);
  const start = p + 1 - before;
  const [oldCount, newCount] = [before + (oldEnd - p) + after, before + (newEnd - p) + after];
  // As formatPatch numbers them: an empty side starts one line earlier.
  const header = `@@ -${oldCount === 0 ? start - 1 : start},${oldCount} +${newCount === 0 ? start - 1 : start},${newCount} @@`;
  return `${header}\n${out.join('\n')}\n`;
}

/** Cuts a diff to MAX_DIFF_BYTES at a line boundary. */
export function capDiff(text: string, max = MAX_DIFF_BYTES): DiffFields {
  if (Buffer.byteLength(text, 'utf8') <= max) return { diff: text, diffTruncated: false };
  const bytes = Buffer.from(text, 'utf8');
  const cut = bytes.lastIndexOf(0x0a, max - 1);
  return { diff: bytes.subarray(0, cut === -1 ? 0 : cut + 1).toString('utf8'), diffTruncated: true };
}
