// E1–E7 and L1–L3 on a stream (L1 for files of any size): the literal edit of `applyEdit`, made
// in one pass over windows of whole lines, each searched with enough of the next kept back that
// a match spanning a window boundary is found whole. Memory: a window and a chunk.
import { FsError } from './errors.js';
import { normalisedView } from './edit.js';
import { countLf } from './line-count.js';
import { atLines, crlfToLf } from './text.js';
import { TextCheck } from './text-stream.js';
import type { FsEditRequest, FsLineRange } from './types.js';

/** Bytes gathered before a window is searched (a stream's chunk, at most, is copied per window). */
const WINDOW = 1024 * 1024;
/** The longest stretch without a line break (times the breaks in old_string) an edit can hold. */
export const MAX_STREAMED_LINE = 64 * 1024 * 1024;

const LF = 10;
const CR = 13;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** What a streamed edit did, known once its output has been read to the end. */
export interface StreamEditResult {
  replacements: number;
  lines: FsLineRange[];
}

interface Match {
  readonly start: number;
  readonly end: number;
}

/**
 * The edited file's bytes, from the original's. Throws (from the iteration) FS_NOT_TEXT,
 * FS_EDIT_NOT_FOUND, FS_AMBIGUOUS_EDIT (at the second match, before the end), or FS_TOO_LARGE
 * for a line beyond MAX_STREAMED_LINE; `result` is filled when the iteration ends normally.
 */
export async function* streamEdit(
  source: AsyncIterable<Uint8Array>,
  edit: Required<FsEditRequest>,
  what: string,
  result: StreamEditResult,
  windowBytes = WINDOW,
): AsyncGenerator<Uint8Array> {
  const oldN = crlfToLf(edit.oldString);
  const newN = crlfToLf(edit.newString);
  const needle = Buffer.from(oldN, 'utf8');
  const newLf = Buffer.from(newN, 'utf8');
  const newCrlf = Buffer.from(newN.replaceAll('\n', '\r\n'), 'utf8');
  const newBreaks = countLf(newLf);
  const endsWithBreak = newBreaks > 0 && newN.endsWith('\n');
  const k = countLf(needle);
  const check = new TextCheck(what);
  let parts: Buffer[] = [];
  let gathered = 0;
  let first = true;
  let inLine = 1; // line of the original at the start of the pending bytes
  let shift = 0; // output lines minus original lines, from the replacements so far
  let lastCrlf: boolean | undefined; // the line break last passed in the original
  const found: number[] = []; // original lines of the matches

  /** Searches `win` (whole lines unless final) and emits what no later match can reach. */
  function* step(win: Buffer, final: boolean): Generator<Uint8Array, Buffer> {
    let limit = win.length;
    if (!final) {
      // Matches may start only before the last k lines: those are kept for the next window.
      let at = win.length - 1;
      for (let i = 0; i < k && at >= 0; i++) at = at === 0 ? -1 : win.lastIndexOf(LF, at - 1);
      limit = at + 1;
    }
    const matches = findMatches(win, needle, oldN, limit, final);
    let cursor = 0;
    let counted = 0; // breaks of `win` before `cursor`
    for (const m of matches) {
      counted += countLf(win, cursor, m.start);
      const line = inLine + counted;
      found.push(line);
      if (!edit.replaceAll && found.length > 1) {
        throw new FsError('FS_AMBIGUOUS_EDIT', `${what}: old_string matches at least ${found.length} times (${atLines(found)}); include more surrounding lines to make it unique, or set replace_all to true`);
      }
      const kept = win.subarray(cursor, m.start);
      if (kept.length > 0) yield kept;
      const crlf = eolAt(win, m.start) ?? lastBreakBefore(win, m.start) ?? lastCrlf ?? false;
      yield crlf ? newCrlf : newLf;
      const outLine = line + shift;
      result.lines.push({ start: outLine, end: outLine + newBreaks - (endsWithBreak ? 1 : 0) });
      const oldBreaks = countLf(win, m.start, m.end);
      shift += newBreaks - oldBreaks;
      counted += oldBreaks;
      cursor = m.end;
    }
    const emitEnd = Math.max(cursor, limit);
    const tail = win.subarray(cursor, emitEnd);
    if (tail.length > 0) yield tail;
    inLine += counted + countLf(win, cursor, emitEnd);
    const before = lastBreakBefore(win, emitEnd);
    if (before !== undefined) lastCrlf = before;
    return win.subarray(emitEnd);
  }

  for await (const chunk of source) {
    let bytes = check.check(chunk);
    if (first && check.offset >= 3) {
      first = false;
      if (bytes.length >= 3 && check.offset === bytes.length && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
        yield BOM;
        bytes = bytes.subarray(3);
      }
    }
    parts.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    gathered += bytes.length;
    if (gathered < windowBytes) continue;
    if (gathered > MAX_STREAMED_LINE * (k + 1) + 4 * WINDOW) {
      throw new FsError(
        'FS_TOO_LARGE',
        `${what}: the lines old_string could span hold more than ${MAX_STREAMED_LINE * (k + 1)} bytes, more than an edit of a large file holds; use an old_string over fewer lines, or replace the file with a write`,
      );
    }
    const last = parts[parts.length - 1]!;
    const cut = last.lastIndexOf(LF) + 1;
    if (cut === 0) {
      parts = [Buffer.concat(parts)];
      continue;
    }
    // Only what comes before the last piece, with its first k + 1 lines, is copied into one
    // window; the rest of that piece is searched where it lies, after the lines kept back.
    const head = parts.length === 1 ? 0 : Math.min(breakEnd(last, k + 1), cut);
    let rest = head === 0 ? last.subarray(0, 0) : yield* step(Buffer.concat([...parts.slice(0, -1), last.subarray(0, head)]), false);
    if (head < cut) rest = yield* step(rest.length <= head ? last.subarray(head - rest.length, cut) : Buffer.concat([rest, last.subarray(head, cut)]), false);
    parts = [Buffer.concat([rest, last.subarray(cut)])];
    gathered = parts[0]!.length;
  }
  check.finish();
  yield* step(Buffer.concat(parts), true);
  if (found.length === 0) throw new FsError('FS_EDIT_NOT_FOUND', `${what}: old_string was not found`);
  result.replacements = found.length;
}

/** The offset just after the `n`th line break of `b`, or its length when it has fewer. */
function breakEnd(b: Uint8Array, n: number): number {
  let at = -1;
  for (let i = 0; i < n; i++) {
    at = b.indexOf(LF, at + 1);
    if (at === -1) return b.length;
  }
  return at + 1;
}

/** Whether the first line break at or after `at` is a CRLF; undefined when there is none. */
function eolAt(win: Buffer, at: number): boolean | undefined {
  const nl = win.indexOf(LF, at);
  return nl === -1 ? undefined : nl > 0 && win[nl - 1] === CR;
}

/** Whether the last line break before `at` is a CRLF; undefined when there is none. */
function lastBreakBefore(win: Buffer, at: number): boolean | undefined {
  if (at === 0) return undefined;
  const nl = win.lastIndexOf(LF, at - 1);
  return nl === -1 ? undefined : nl > 0 && win[nl - 1] === CR;
}

/**
 * Matches of old_string (LF and CRLF alike, L1) starting before `limit`, left to right, not
 * overlapping, as byte offsets. Without a CR the bytes are searched as they are; with one the
 * window is decoded and searched as applyEdit searches text.
 */
function findMatches(win: Buffer, needle: Buffer, oldN: string, limit: number, final: boolean): Match[] {
  const out: Match[] = [];
  if (limit === 0 && !final) return out;
  if (win.indexOf(CR) === -1) {
    for (let i = win.indexOf(needle); i !== -1 && i < limit; i = win.indexOf(needle, i + needle.length)) out.push({ start: i, end: i + needle.length });
    return out;
  }
  const text = win.toString('utf8');
  const view = normalisedView(text);
  const byteAt = (index: number) => Buffer.byteLength(text.slice(0, index), 'utf8');
  for (let i = view.text.indexOf(oldN); i !== -1; i = view.text.indexOf(oldN, i + oldN.length)) {
    const start = byteAt(view.toOriginal(i));
    if (start >= limit) break;
    out.push({ start, end: byteAt(view.toOriginal(i + oldN.length)) });
  }
  return out;
}
