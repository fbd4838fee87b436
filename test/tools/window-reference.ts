// The line-at-a-time implementation of readWindow as it was before its fast path, kept as the
// reference the current one must match exactly.
import type { ReadLine } from '../../src/tools/index.js';
import type { TextWindow, WindowOptions } from '../../src/tools/read.js';

const CR = 13;
const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;
const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');

/**
 * Cuts a window of numbered lines out of streamed text, in one pass and bounded memory: only
 * lines inside the window are kept, each at most `maxLineChars` code points (a surrogate pair is
 * never split). Every line is counted, so the total is exact. Lines end at LF; the CR of a CRLF
 * is dropped and a lone CR is kept. The window holds at most `limit` lines and `maxBytes` of
 * rendered output; its first line is always returned, cut further if it alone exceeds the cap.
 */
export async function referenceWindow(chunks: AsyncIterable<string>, options: WindowOptions): Promise<TextWindow> {
  const { offset, limit, maxLineChars, maxBytes } = options;
  const lines: ReadLine[] = [];
  let lineNo = 1;
  let collecting = true;
  let capped = false;
  let used = 0;

  // State of the line being scanned; the text parts only while it is inside the window.
  let parts: string[] = [];
  let length = 0;
  let hasChars = false;
  let endsWithCr = false;
  let prevHigh = false;
  let pairKept = false;

  const inWindow = () => collecting && lineNo >= offset;

  const addSegment = (chunk: string, from: number, to: number) => {
    hasChars = true;
    if (!inWindow()) return;
    let keepUntil = from;
    for (let i = from; i < to; i++) {
      const c = chunk.charCodeAt(i);
      if (prevHigh && isLow(c)) {
        prevHigh = false;
        if (pairKept) keepUntil = i + 1;
        continue;
      }
      length++;
      prevHigh = isHigh(c);
      if (length <= maxLineChars) {
        keepUntil = i + 1;
        pairKept = prevHigh;
      } else pairKept = false;
    }
    if (keepUntil > from) parts.push(chunk.slice(from, keepUntil));
    endsWithCr = chunk.charCodeAt(to - 1) === CR;
  };

  const finishLine = (brokenByLf: boolean) => {
    if (inWindow()) {
      let text = parts.join('');
      if (brokenByLf && endsWithCr) {
        // The CR belongs to the CRLF line break, not to the line.
        if (length <= maxLineChars) text = text.slice(0, -1);
        length--;
      }
      let line: ReadLine = length > maxLineChars ? { number: lineNo, text, fullLength: length } : { number: lineNo, text };
      let bytes = utf8Length(renderReadLine(line)) + 1;
      if (used + bytes > maxBytes) {
        if (lines.length === 0) {
          line = fitLine(line, length, maxBytes - 1);
          bytes = maxBytes;
        } else {
          collecting = false;
          capped = true;
        }
      }
      if (collecting) {
        lines.push(line);
        used += bytes;
        if (used >= maxBytes) {
          collecting = false;
          capped = true;
        }
        if (lines.length >= limit) {
          collecting = false;
          capped = false;
        }
      }
    }
    lineNo++;
    parts = [];
    length = 0;
    hasChars = false;
    endsWithCr = false;
    prevHigh = false;
    pairKept = false;
  };

  for await (const chunk of chunks) {
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf('\n', pos);
      const end = nl === -1 ? chunk.length : nl;
      if (end > pos) addSegment(chunk, pos, end);
      if (nl === -1) break;
      finishLine(true);
      pos = nl + 1;
    }
  }
  if (hasChars) finishLine(false);
  const totalLines = lineNo - 1;
  return capped ? { lines, totalLines, cappedAtBytes: maxBytes } : { lines, totalLines };
}

/** Cuts a line so that its rendering, marker included, fits in `budget` bytes. */
function fitLine(line: ReadLine, fullLength: number, budget: number): ReadLine {
  const fixed = utf8Length(`${line.number}: `) + utf8Length(truncationMarker(fullLength, fullLength));
  let room = budget - fixed;
  let end = 0;
  for (const ch of line.text) {
    const size = ch === '\r' ? utf8Length('␍') : utf8Length(ch);
    if (size > room) break;
    room -= size;
    end += ch.length;
  }
  return { number: line.number, text: line.text.slice(0, end), fullLength };
}

function truncationMarker(shown: number, full: number): string {
  return ` … (line truncated: ${shown} of ${full} characters shown)`;
}

function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (!(isLow(text.charCodeAt(i)) && i > 0 && isHigh(text.charCodeAt(i - 1)))) n++;
  return n;
}

/** One numbered line as the model sees it: `N: text`, a lone CR shown as ␍, a cut line marked. */
function renderReadLine(line: ReadLine): string {
  const body = line.text.includes('\r') ? line.text.replaceAll('\r', '␍') : line.text;
  const marker = line.fullLength === undefined ? '' : truncationMarker(codePoints(line.text), line.fullLength);
  return `${line.number}: ${body}${marker}`;
}

