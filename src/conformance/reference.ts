/**
 * Small, independent re-statements of the text rules, so the suite does not only compare the
 * seam with itself. E7 holds the seam's own `applyEdit` to them; elsewhere (the model-based check,
 * the guard rules) the suite computes expected content with the seam's `applyEdit` and `textForWrite`.
 */

export interface Span {
  /** Start index in the original text. */
  readonly start: number;
  /** End index (exclusive) in the original text. */
  readonly end: number;
  /** 1-based line of the start (lines end at LF; a lone CR does not end a line). */
  readonly line: number;
}

/**
 * Non-overlapping, left-to-right matches of `needle` in `text`, where a CRLF in either counts as
 * one LF; spans are reported in the original text.
 */
export function findMatches(text: string, needle: string): Span[] {
  const origin: number[] = []; // index in `text` of each character of the folded text
  let folded = '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\r' && text[i + 1] === '\n') continue;
    origin.push(text[i] === '\n' && text[i - 1] === '\r' ? i - 1 : i);
    folded += text[i];
  }
  const n = needle.replaceAll('\r\n', '\n');
  const spans: Span[] = [];
  if (n.length === 0) return spans;
  for (let at = folded.indexOf(n); at !== -1; at = folded.indexOf(n, at + n.length)) {
    const end = at + n.length;
    spans.push({
      start: origin[at]!,
      end: end < origin.length ? origin[end]! : text.length,
      line: countLf(folded.slice(0, at)) + 1,
    });
  }
  return spans;
}

export function countLf(text: string): number {
  let n = 0;
  for (const ch of text) if (ch === '\n') n++;
  return n;
}

/** True when most line breaks are CRLF (a lone CR is not a line break). */
export function isCrlfDominant(text: string): boolean {
  const crlf = text.split('\r\n').length - 1;
  const lf = text.split('\n').length - 1 - crlf;
  return crlf > lf;
}

export type ReferenceEdit =
  | { readonly ok: true; readonly text: string; readonly replacements: number }
  | { readonly ok: false; readonly code: 'FS_EDIT_NOT_FOUND' | 'FS_AMBIGUOUS_EDIT' | 'FS_INVALID_ARGUMENT' };

/**
 * E3–E5, L1–L3 restated plainly (quadratic, for small texts): splice `newString` over each match,
 * its line breaks in the style of the matched region, and nothing else changed. E7 holds both
 * providers and the seam's own `applyEdit` to it.
 */
export function referenceEdit(text: string, oldString: string, newString: string, replaceAll: boolean): ReferenceEdit {
  const fold = (s: string) => s.replaceAll('\r\n', '\n');
  if (oldString === '' || fold(oldString) === fold(newString)) return { ok: false, code: 'FS_INVALID_ARGUMENT' };
  const spans = findMatches(text, oldString);
  if (spans.length === 0) return { ok: false, code: 'FS_EDIT_NOT_FOUND' };
  if (spans.length > 1 && !replaceAll) return { ok: false, code: 'FS_AMBIGUOUS_EDIT' };
  let out = '';
  let last = 0;
  for (const span of spans) {
    out += text.slice(last, span.start) + fold(newString).replaceAll('\n', regionEol(text, span));
    last = span.end;
  }
  return { ok: true, text: out + text.slice(last), replacements: spans.length };
}

/** The break inside the match, else the one ending its line, else the one before it, else LF. */
function regionEol(text: string, span: Span): string {
  const style = (i: number) => (text[i - 1] === '\r' ? '\r\n' : '\n');
  for (let i = span.start; i < span.end; i++) if (text[i] === '\n') return i > span.start ? style(i) : '\n';
  for (let i = span.end; i < text.length; i++) if (text[i] === '\n') return style(i);
  for (let i = span.start - 1; i >= 0; i--) if (text[i] === '\n') return style(i);
  return '\n';
}

/** T1 restated: the text of UTF-8 bytes without NUL (one leading BOM dropped), or undefined. */
export function plainDecode(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
