// The read tool's window over a file too large to hold: its bytes streamed, lines before the
// window counted on the bytes (never decoded), the window decoded and cut as readWindow cuts it,
// and lines past it counted only until the footer knows there is more.
import { isUtf8 } from 'node:buffer';
import { FsError } from '../seam/index.js';
import { firstInvalidUtf8 } from '../seam/text.js';
import { LineWindow, type TextWindow, type WindowOptions } from './read-window.js';

export interface LargeWindow extends TextWindow {
  readonly bom: boolean;
  /** Set when counting stopped past the window: `totalLines` is then a lower bound. */
  readonly totalLinesAtLeast?: true;
}

const LF = 10;

/**
 * T1 on a stream: every byte looked at is checked (no NUL, valid UTF-8, no UTF-16 BOM), with the
 * offset of the first bad byte; a sequence cut by a chunk boundary is carried to the next chunk.
 */
class TextCheck {
  private carry: Uint8Array | undefined;
  offset = 0;
  constructor(private readonly what: string) {}

  /** The complete sequences of `chunk` (with what was carried), checked. */
  check(chunk: Uint8Array): Uint8Array {
    const bytes = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    let end = bytes.length;
    // Back off to the start of a sequence that may be incomplete (at most 3 bytes).
    for (let k = 1; k <= 3 && k <= bytes.length; k++) {
      const b = bytes[bytes.length - k]!;
      if ((b & 0xc0) === 0x80) continue;
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (need > k) end = bytes.length - k;
      break;
    }
    const whole = bytes.subarray(0, end);
    this.carry = end < bytes.length ? bytes.slice(end) : undefined;
    if (this.offset === 0 && whole.length >= 2 && ((whole[0] === 0xff && whole[1] === 0xfe) || (whole[0] === 0xfe && whole[1] === 0xff))) {
      this.fail('a UTF-16 byte order mark (only UTF-8 is supported)');
    }
    const nul = whole.indexOf(0);
    if (nul !== -1) this.fail(`a NUL byte at byte ${this.offset + nul} (binary file)`);
    if (!isUtf8(whole)) this.fail(`invalid UTF-8 at byte ${this.offset + firstInvalidUtf8(whole)}`);
    this.offset += whole.length;
    return whole;
  }

  finish(): void {
    if (this.carry !== undefined) this.fail(`invalid UTF-8 at byte ${this.offset}`);
  }

  private fail(found: string): never {
    throw new FsError('FS_NOT_TEXT', `${this.what}: not a UTF-8 text file: found ${found}`);
  }
}

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
    window.feed(decoder.decode(bytes.subarray(at), { stream: true }));
    if (!window.collecting && (window.lineNo - 1 > lastShown(window) || window.hasChars)) {
      const end = window.end();
      return { ...end, bom: bom ?? false, totalLinesAtLeast: true };
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
