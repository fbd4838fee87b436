// The read tool's window over a file too large to hold: its bytes streamed, lines before the
// window counted on the bytes (never decoded), the window decoded and cut as readWindow cuts it,
// and lines past it counted only until the footer knows there is more.
import { countLf } from '../seam/line-count.js';
import { TextCheck } from '../seam/text-stream.js';
import { LineWindow, type TextWindow, type WindowOptions } from './read-window.js';

export interface LargeWindow extends TextWindow {
  readonly bom: boolean;
  /** Set when counting stopped past the window: `totalLines` is then a lower bound. */
  readonly totalLinesAtLeast?: true;
}

const LF = 10;
const DECODE_BYTES = 64 * 1024;

/**
 * Cuts the window `offset..offset+limit` out of a byte stream in memory bounded by the window and
 * a chunk. The bytes are checked as text as far as they are read; the loop stops once the window
 * is full and one more line is known to follow, so a window at the start of a file of any size
 * reads a chunk or two.
 */
export async function readLargeWindow(chunks: AsyncIterable<Uint8Array>, options: WindowOptions, what: string): Promise<LargeWindow> {
  const check = new TextCheck(what);
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let window: LineWindow | undefined;
  let line = 1;
  let bom: boolean | undefined;
  let pendingChars = false; // bytes of an unfinished line before the window
  for await (const chunk of chunks) {
    let bytes = check.check(chunk);
    if (bom === undefined && check.offset >= 3) {
      bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf && check.offset - bytes.length === 0;
      if (bom) bytes = bytes.subarray(3);
    }
    let at = 0;
    if (window === undefined && line < options.offset) {
      // A chunk wholly before the window is only counted (SIMD), not walked line by line.
      const breaks = countLf(bytes);
      if (line + breaks < options.offset) {
        line += breaks;
        pendingChars = breaks > 0 ? bytes[bytes.length - 1] !== LF : pendingChars || bytes.length > 0;
        continue;
      }
    }
    while (window === undefined && line < options.offset) {
      const nl = bytes.indexOf(LF, at);
      if (nl === -1) {
        pendingChars ||= at < bytes.length;
        at = bytes.length;
        break;
      }
      line++;
      pendingChars = false;
      at = nl + 1;
    }
    if (window === undefined && line >= options.offset) window = new LineWindow(options.offset, options.limit, options.maxLineChars, options.maxBytes, line);
    if (window === undefined || at >= bytes.length) continue;
    // Decoded a slice at a time: a window needs far less than a chunk, and decoding is dear.
    for (; at < bytes.length; at += DECODE_BYTES) {
      window.feed(decoder.decode(bytes.subarray(at, at + DECODE_BYTES), { stream: true }));
      if (!window.collecting && (window.lineNo - 1 > lastShown(window) || window.hasChars)) {
        const end = window.end();
        return { ...end, bom: bom ?? false, totalLinesAtLeast: true };
      }
    }
  }
  check.finish();
  if (window === undefined) {
    // The file ends before the window: its exact line count, as readWindow gives it.
    return { lines: [], totalLines: line - 1 + (pendingChars ? 1 : 0), bom: bom ?? false };
  }
  window.feed(decoder.decode());
  return { ...window.end(), bom: bom ?? false };
}

const lastShown = (window: LineWindow): number => window.lines.at(-1)?.number ?? window.offset - 1;
