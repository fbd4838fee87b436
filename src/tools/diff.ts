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

/**
 * The diff fields for a change from `before` (undefined: a new file) to `after`; none when either
 * side is not text or too large. `knownText`: both sides were decoded as text already (an edit's).
 */
export function diffFields(path: string, before: Uint8Array | undefined, after: Uint8Array, knownText = false): DiffFields {
  if ((before?.byteLength ?? 0) > MAX_DIFF_INPUT_BYTES || after.byteLength > MAX_DIFF_INPUT_BYTES) return {};
  if (!knownText && (textProblem(before ?? empty) !== undefined || textProblem(after) !== undefined)) return {};
  const from = before === undefined ? '/dev/null' : path;
  const [a, b] = [keepBom.decode(before ?? empty), keepBom.decode(after)];
  const hunks = blockDiff(a, b) ?? formatHunks(structuredPatch(from, path, a, b, undefined, undefined, { context: CONTEXT }));
  const text = hunks === '' ? '' : `--- ${from}\n+++ ${path}\n${hunks}`;
  return capDiff(text);
}

const CONTEXT = 3;

const formatHunks = (patch: StructuredPatch) => (patch.hunks.length === 0 ? '' : formatPatch(patch, OMIT_HEADERS));

/** Lines as jsdiff's line diff cuts them: each with its line break (LF or CRLF); no empty last line. */
function linesOf(text: string, max = Infinity): string[] {
  const out: string[] = [];
  let at = 0;
  for (let nl = text.indexOf('\n'); nl !== -1 && out.length < max; nl = text.indexOf('\n', at)) {
    out.push(text.slice(at, nl + 1));
    at = nl + 1;
  }
  if (at < text.length && out.length < max) out.push(text.slice(at));
  return out;
}

/**
 * Where `a` and `b` part, in characters: both start with the same lines (up to `head`) and end
 * with the same lines (`a` from `oldEnd`, `b` from `newEnd`); between lie the changed blocks.
 * Undefined when the texts are equal. A common line is a whole line, break included.
 */
function partLines(a: string, b: string): { head: number; oldEnd: number; newEnd: number } | undefined {
  const m = Math.min(a.length, b.length);
  // Blocks of characters compare natively; only the block holding the difference goes by character.
  let d = 0;
  while (d + BLOCK <= m && a.slice(d, d + BLOCK) === b.slice(d, d + BLOCK)) d += BLOCK;
  while (d < m && a.charCodeAt(d) === b.charCodeAt(d)) d++;
  if (d === a.length && d === b.length) return undefined;
  // The line holding the first difference differs; those before it are common.
  const head = d === 0 ? 0 : a.lastIndexOf('\n', d - 1) + 1;
  let e = 0;
  while (e + BLOCK <= m - head && a.slice(a.length - e - BLOCK, a.length - e) === b.slice(b.length - e - BLOCK, b.length - e)) e += BLOCK;
  while (e < m - head && a.charCodeAt(a.length - 1 - e) === b.charCodeAt(b.length - 1 - e)) e++;
  // The common end, from where a line starts in both (inside it, a start in one is one in the other).
  const startsLine = (t: string, i: number) => i === head || t.charCodeAt(i - 1) === LF;
  let q = e;
  if (!(startsLine(a, a.length - q) && startsLine(b, b.length - q))) {
    const nl = a.indexOf('\n', a.length - q);
    q = nl === -1 ? 0 : a.length - nl - 1;
  }
  return { head, oldEnd: a.length - q, newEnd: b.length - q };
}

const LF = 10;
const BLOCK = 64;

/**
 * Whether any of `lines` (from linesOf) is one of the lines of `text`: one pass over the lines of
 * `text`, comparing only those of a length some of `lines` has.
 */
function hasAnyLine(text: string, lines: readonly string[]): boolean {
  const lengths = new Set<number>();
  for (const line of lines) lengths.add(line.length);
  for (let at = 0; at < text.length; ) {
    const nl = text.indexOf('\n', at);
    const end = nl === -1 ? text.length : nl + 1;
    if (lengths.has(end - at)) for (const line of lines) if (line.length === end - at && text.startsWith(line, at)) return true;
    at = end;
  }
  return false;
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
  const parts = partLines(a, b);
  if (parts === undefined) return undefined;
  const { head, oldEnd, newEnd } = parts;
  const [O, N, tail] = [linesOf(a.slice(head, oldEnd)), linesOf(b.slice(head, newEnd)), a.slice(oldEnd)];
  const old = new Set(O);
  for (const line of N) if (old.has(line)) return undefined;
  if (hasAnyLine(tail, O.length === 0 ? N : N.length === 0 ? O : [...O, ...N])) return undefined;
  let from = head;
  let before = 0;
  for (; before < CONTEXT && from > 0; before++) from = from >= 2 ? a.lastIndexOf('\n', from - 2) + 1 : 0;
  const after = linesOf(tail, CONTEXT);
  const out: string[] = [];
  const push = (mark: string, line: string) => out.push(line.endsWith('\n') ? mark + line.slice(0, -1) : `${mark}${line}\n\\ No newline at end of file`);
  for (const line of linesOf(a.slice(from, head))) push(' ', line);
  for (const line of O) push('-', line);
  for (const line of N) push('+', line);
  for (const line of after) push(' ', line);
  let start = 1;
  for (let nl = a.indexOf('\n'); nl !== -1 && nl < from; nl = a.indexOf('\n', nl + 1)) start++;
  const [oldCount, newCount] = [before + O.length + after.length, before + N.length + after.length];
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
