/**
 * Small, independent re-statements of the text rules, so the suite does not only compare the
 * seam with itself. E7 is the one rule that compares against the seam's own `applyEdit`.
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
