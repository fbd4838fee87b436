import { FsError } from './errors.js';
import type { FsLineRange } from './types.js';
import { UTF8_BOM, crlfToLf, decodeText, encodeText, atLines, lineNumberAt, lineNumbersAt, type Eol } from './text.js';

export type EditResult =
  | { readonly ok: true; readonly text: string; readonly replacements: number; readonly lines: FsLineRange[] }
  | { readonly ok: false; readonly error: FsError };

const MAX_LISTED_LINES = 20;
const MAX_HINT_CHARS = 16 * 1024 * 1024;

/**
 * The literal edit engine (E1–E7, L1–L3), a pure function on decoded text.
 *
 * Matching ignores the difference between LF and CRLF line breaks (a lone CR is an ordinary
 * character); matches are non-overlapping, left to right. Each match is spliced into the
 * original text, so every character outside the matched spans is kept as it was. Line breaks
 * in `newString` take the line ending of the matched region. `$` patterns are never expanded.
 */
export function applyEdit(text: string, oldString: string, newString: string, replaceAll = false): EditResult {
  if (typeof oldString !== 'string' || oldString.length === 0) {
    return fail('FS_INVALID_ARGUMENT', 'old_string must be a non-empty string');
  }
  if (typeof newString !== 'string') return fail('FS_INVALID_ARGUMENT', 'new_string must be a string');
  const oldN = crlfToLf(oldString);
  const newN = crlfToLf(newString);
  if (oldN === newN) return fail('FS_INVALID_ARGUMENT', 'old_string and new_string are identical; there is nothing to change');

  const view = normalisedView(text);
  const starts: number[] = [];
  for (let i = view.text.indexOf(oldN); i !== -1; i = view.text.indexOf(oldN, i + oldN.length)) {
    starts.push(i);
    if (!replaceAll && starts.length > 1 && starts.length > MAX_LISTED_LINES) break;
  }
  if (starts.length === 0) {
    const hint = text.length <= MAX_HINT_CHARS ? nearMatchHint(view.text, oldN) : undefined;
    return fail('FS_EDIT_NOT_FOUND', `old_string was not found${hint ? `; ${hint}` : ''}`);
  }
  if (starts.length > 1 && !replaceAll) {
    const lines = lineNumbersAt(view.text, starts.slice(0, MAX_LISTED_LINES));
    const total = countAll(view.text, oldN);
    return fail(
      'FS_AMBIGUOUS_EDIT',
      `old_string matches ${total} times (${atLines(lines, total > lines.length)}); ` +
        'include more surrounding lines to make it unique, or set replace_all to true',
    );
  }

  const parts: string[] = [];
  const ranges: FsLineRange[] = [];
  let cursor = 0; // index into the original text
  let line = 1; // line number at `cursor` in the output
  const newBreaks = countChar(newN, '\n');
  const newCrlf = newBreaks > 0 ? newN.replaceAll('\n', '\r\n') : newN;
  const eols = regionEols(view, starts);
  for (let k = 0; k < starts.length; k++) {
    const s = starts[k]!;
    const from = view.toOriginal(s);
    const to = view.toOriginal(s + oldN.length);
    const kept = text.slice(cursor, from);
    line += countChar(kept, '\n');
    parts.push(kept, eols[k] === '\n' ? newN : newCrlf);
    // A replacement ending in a line break ends on the line before the next untouched one.
    const endsWithBreak = newBreaks > 0 && newN.endsWith('\n');
    ranges.push({ start: line, end: line + newBreaks - (endsWithBreak ? 1 : 0) });
    line += newBreaks;
    cursor = to;
  }
  parts.push(text.slice(cursor));
  return { ok: true, text: parts.join(''), replacements: starts.length, lines: ranges };
}

function fail(code: FsError['code'], message: string): EditResult {
  return { ok: false, error: new FsError(code, message) };
}

/** The text with CRLF folded to LF, and a map from its indices back to the original. */
export interface NormalisedView {
  readonly text: string;
  /** Normalised indices of the LFs that were CRLF in the original, ascending. */
  readonly crlf: readonly number[];
  toOriginal(index: number): number;
}

export function normalisedView(original: string): NormalisedView {
  const crlf: number[] = [];
  for (let i = original.indexOf('\r\n'); i !== -1; i = original.indexOf('\r\n', i + 2)) crlf.push(i - crlf.length);
  if (crlf.length === 0) return { text: original, crlf, toOriginal: (i) => i };
  return {
    text: original.replaceAll('\r\n', '\n'),
    crlf,
    // Every CRLF before `index` occupies one more character in the original.
    toOriginal: (index) => index + lowerBound(crlf, index),
  };
}

function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function isCrlfAt(view: NormalisedView, index: number): boolean {
  const k = lowerBound(view.crlf, index);
  return view.crlf[k] === index;
}

/**
 * L2: the line ending of each matched region — that of the first line break inside the match,
 * else of the line the match ends on, else of the line before it; LF in a file with no breaks.
 * One pass over the breaks for all matches (ascending starts): looking each one up from its own
 * start made many matches on a long line quadratic.
 */
function regionEols(view: NormalisedView, starts: readonly number[]): Eol[] {
  const t = view.text;
  const out: Eol[] = [];
  let prev = -1; // the last break before the current match
  let next = t.indexOf('\n'); // the first break at or after it
  for (const start of starts) {
    while (next !== -1 && next < start) {
      prev = next;
      next = t.indexOf('\n', next + 1);
    }
    // The first break at or after the start is inside the match, or else the first after it.
    const at = next !== -1 ? next : prev;
    out.push(at !== -1 && isCrlfAt(view, at) ? '\r\n' : '\n');
  }
  return out;
}

function countChar(text: string, ch: string): number {
  let n = 0;
  for (let i = text.indexOf(ch); i !== -1; i = text.indexOf(ch, i + 1)) n++;
  return n;
}

function countAll(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

// ---------------------------------------------------------------------------------------------
// E6: explain a miss. Each probe folds one kind of difference on both sides, line by line (so
// line numbers survive), and reports where the folded old_string would match. Never applied.
// ---------------------------------------------------------------------------------------------

interface Probe {
  readonly fold: (text: string) => string;
  readonly foldOld?: (old: string) => string | undefined;
  readonly describe: (fileLine: string, oldFirstLine: string) => string;
}

const mapLines = (text: string, f: (line: string) => string) => text.split('\n').map(f).join('\n');
const SMART = /[\u2018\u2019\u201a\u201b\u2032\u201c\u201d\u201e\u201f\u2033]/g;
const foldQuotes = (t: string) => t.replace(SMART, (c) => ('\u2018\u2019\u201a\u201b\u2032'.includes(c) ? "'" : '"'));
const LINE_PREFIX = /^\s*\d+: ?/;

const PROBES: readonly Probe[] = [
  {
    fold: (t) => t,
    foldOld: (old) => {
      const lines = old.split('\n');
      if (!lines.every((l) => l === '' || LINE_PREFIX.test(l))) return undefined;
      return lines.map((l) => l.replace(LINE_PREFIX, '')).join('\n');
    },
    describe: () => 'old_string includes line-number prefixes ("12: ") copied from read output; remove them',
  },
  {
    fold: (t) => t.replaceAll('\r', ''),
    describe: () => 'the line endings differ (a carriage return that is not part of a CRLF line break)',
  },
  {
    fold: (t) => mapLines(t, (l) => l.replace(/[ \t]+$/, '')),
    describe: () => 'trailing whitespace differs',
  },
  {
    fold: (t) => mapLines(t, (l) => l.replace(/^[ \t]+/, '')),
    describe: (fileLine, oldLine) => {
      const fileIndent = /^[ \t]*/.exec(fileLine)![0];
      const oldIndent = /^[ \t]*/.exec(oldLine)![0];
      const kind = (s: string) => (s.includes('\t') ? (s.includes(' ') ? 'tabs and spaces' : 'tabs') : 'spaces');
      if (fileIndent && oldIndent && kind(fileIndent) !== kind(oldIndent)) {
        return `the indentation differs (the file indents with ${kind(fileIndent)}, old_string with ${kind(oldIndent)})`;
      }
      return 'the indentation differs';
    },
  },
  { fold: foldQuotes, describe: () => 'the quote characters differ (curly quotes versus straight quotes)' },
];

export function nearMatchHint(text: string, oldString: string): string | undefined {
  const old = crlfToLf(oldString);
  for (const probe of PROBES) {
    const foldedOld = probe.foldOld ? probe.foldOld(old) : probe.fold(old);
    if (foldedOld === undefined || foldedOld.trim() === '') continue;
    const folded = probe.fold(text);
    const at = folded.indexOf(foldedOld);
    if (at === -1) continue;
    const line = lineNumberAt(folded, at);
    const fileLine = text.split('\n', line)[line - 1] ?? '';
    return `a near match starts at line ${line}, but ${probe.describe(fileLine, old.split('\n')[0] ?? '')}. Copy the exact text from the file`;
  }
  return undefined;
}

/** What `editBytes` produced: the new file bytes and where the replacements landed. */
export interface BytesEdit {
  readonly bytes: Uint8Array;
  readonly replacements: number;
  readonly lines: FsLineRange[];
}

/**
 * The whole edit of a file's bytes, as the seam does it and as a provider's native `editText`
 * should: T1 decoding, the literal edit, and re-encoding that keeps exactly the BOM it found
 * (E5/L4), even when the text itself starts with U+FEFF. Throws FsError with `what` as prefix.
 */
export function editBytes(
  bytes: Uint8Array,
  edit: { readonly oldString: string; readonly newString: string; readonly replaceAll?: boolean },
  what: string,
): BytesEdit {
  const { text, bom } = decodeText(bytes, what);
  const result = applyEdit(text, edit.oldString, edit.newString, edit.replaceAll ?? false);
  if (!result.ok) throw new FsError(result.error.code, `${what}: ${result.error.message}`);
  const body = encodeText(result.text, false);
  const out = bom ? new Uint8Array(body.byteLength + 3) : body;
  if (bom) {
    out.set(UTF8_BOM, 0);
    out.set(body, 3);
  }
  return { bytes: out, replacements: result.replacements, lines: result.lines };
}
