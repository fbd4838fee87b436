// The read tool's window over streamed text: numbered lines cut by line count, line length and
// rendered bytes, in one pass and bounded memory, and how one such line is rendered.

export interface ReadLine {
  /** 1-based line number. */
  readonly number: number;
  /** The line without its line break (the CR of a CRLF removed); only its beginning when cut. */
  readonly text: string;
  /** Set when `text` was cut: the length of the whole line in characters (code points). */
  readonly fullLength?: number;
}


export interface WindowOptions {
  readonly offset: number;
  readonly limit: number;
  readonly maxLineChars: number;
  readonly maxBytes: number;
}

export interface TextWindow {
  readonly lines: ReadLine[];
  readonly totalLines: number;
  readonly cappedAtBytes?: number;
}

const CR = 13;
const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;
const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');

/** Upper bound of the UTF-8 bytes a rendered line adds besides its text: `N: ` and the line break. */
const LINE_OVERHEAD = 20;

/**
 * The scanning state of readWindow. Lines that are wholly kept take a fast path: one slice, no
 * per-character work, and a byte count bounded from above (3 bytes per UTF-16 unit) until the
 * bound could reach the cap; from then on every line's rendering is measured exactly.
 */
export class LineWindow {
  readonly lines: ReadLine[] = [];
  lineNo: number;
  collecting = true;
  capped = false;
  /** Exact rendered bytes, once `exact` is set. */
  used = 0;
  /** Upper bound of the rendered bytes while `exact` is not set. */
  bound = 0;
  exact = false;

  // The line being scanned; its text parts only while it is inside the window.
  parts: string[] = [];
  /** UTF-16 units of the line so far, while every one of them is kept. */
  units = 0;
  /** Code points, once the line has left the fast path (`slow`). */
  length = 0;
  slow = false;
  hasChars = false;
  endsWithCr = false;
  prevHigh = false;
  pairKept = false;

  constructor(
    readonly offset: number,
    readonly limit: number,
    readonly maxLineChars: number,
    readonly maxBytes: number,
    /** The number of the first line fed (a caller that skipped lines itself starts later). */
    firstLine = 1,
  ) {
    this.lineNo = firstLine;
  }

  feed(chunk: string): void {
    const n = chunk.length;
    let pos = 0;
    while (pos < n) {
      if (!(this.collecting && this.lineNo >= this.offset)) {
        // Outside the window only lines are counted.
        const nl = chunk.indexOf('\n', pos);
        if (nl === -1) {
          this.hasChars = true;
          return;
        }
        this.lineNo++;
        this.hasChars = false;
        pos = nl + 1;
        continue;
      }
      const nl = chunk.indexOf('\n', pos);
      const end = nl === -1 ? n : nl;
      if (end > pos) this.segment(chunk, pos, end);
      if (nl === -1) return;
      this.finishLine(true);
      pos = nl + 1;
    }
  }

  private segment(chunk: string, from: number, to: number): void {
    this.hasChars = true;
    this.endsWithCr = chunk.charCodeAt(to - 1) === CR;
    if (!this.slow) {
      // Code points never outnumber UTF-16 units, so a line within the limit in units is kept whole.
      if (this.units + (to - from) <= this.maxLineChars) {
        this.parts.push(from === 0 && to === chunk.length ? chunk : chunk.slice(from, to));
        this.units += to - from;
        return;
      }
      // Replay what was kept so far to get the exact state character by character.
      const kept = this.parts.join('');
      this.parts = [];
      this.slow = true;
      if (kept.length > 0) this.scan(kept, 0, kept.length);
    }
    this.scan(chunk, from, to);
  }

  private scan(chunk: string, from: number, to: number): void {
    const max = this.maxLineChars;
    let { length, prevHigh, pairKept } = this;
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
      if (length <= max) {
        keepUntil = i + 1;
        pairKept = prevHigh;
      } else pairKept = false;
    }
    this.length = length;
    this.prevHigh = prevHigh;
    this.pairKept = pairKept;
    if (keepUntil > from) this.parts.push(chunk.slice(from, keepUntil));
  }

  finishLine(brokenByLf: boolean): void {
    if (this.collecting && this.lineNo >= this.offset) this.emit(brokenByLf);
    this.lineNo++;
    this.parts = [];
    this.units = 0;
    this.length = 0;
    this.slow = false;
    this.hasChars = false;
    this.endsWithCr = false;
    this.prevHigh = false;
    this.pairKept = false;
  }

  private emit(brokenByLf: boolean): void {
    const { parts, maxLineChars, maxBytes, lines } = this;
    let text = parts.length === 1 ? parts[0]! : parts.join('');
    let line: ReadLine;
    if (!this.slow) {
      // Kept whole: code points ≤ units ≤ maxLineChars, so the line is never cut.
      if (brokenByLf && this.endsWithCr) text = text.slice(0, -1);
      line = { number: this.lineNo, text };
      if (!this.exact) {
        const bound = this.bound + 3 * text.length + LINE_OVERHEAD;
        if (bound < maxBytes) {
          this.bound = bound;
          this.push(line);
          return;
        }
        this.measure();
      }
    } else {
      let length = this.length;
      if (brokenByLf && this.endsWithCr) {
        // The CR belongs to the CRLF line break, not to the line.
        if (length <= maxLineChars) text = text.slice(0, -1);
        length--;
      }
      this.length = length;
      line = length > maxLineChars ? { number: this.lineNo, text, fullLength: length } : { number: this.lineNo, text };
      if (!this.exact) this.measure();
    }
    let bytes = lineBytes(line);
    if (this.used + bytes > maxBytes) {
      if (lines.length === 0) {
        line = fitLine(line, this.slow ? this.length : codePoints(line.text), maxBytes - 1);
        bytes = maxBytes;
      } else {
        this.collecting = false;
        this.capped = true;
        return;
      }
    }
    this.used += bytes;
    this.push(line);
    if (this.used >= maxBytes) {
      this.collecting = false;
      this.capped = true;
    }
    if (lines.length >= this.limit) {
      this.collecting = false;
      this.capped = false;
    }
  }

  private push(line: ReadLine): void {
    this.lines.push(line);
    if (this.lines.length >= this.limit) this.collecting = false;
  }

  /** Leaves the bound for exact counting: measures every line kept so far. */
  private measure(): void {
    this.exact = true;
    let used = 0;
    for (const l of this.lines) used += lineBytes(l);
    this.used = used;
  }

  end(): TextWindow {
    if (this.hasChars) this.finishLine(false);
    const totalLines = this.lineNo - 1;
    return this.capped ? { lines: this.lines, totalLines, cappedAtBytes: this.maxBytes } : { lines: this.lines, totalLines };
  }
}

/** UTF-8 bytes of a rendered line and its line break. */
const lineBytes = (line: ReadLine) => utf8Length(renderReadLine(line)) + 1;

/**
 * Cuts a window of numbered lines out of streamed text, in one pass and bounded memory: only
 * lines inside the window are kept, each at most `maxLineChars` code points (a surrogate pair is
 * never split). Every line is counted, so the total is exact. Lines are cut as `splitLines` cuts
 * them (a property holds the two equal): at LF; the CR of a CRLF
 * is dropped and a lone CR is kept. The window holds at most `limit` lines and `maxBytes` of
 * rendered output; its first line is always returned, cut further if it alone exceeds the cap.
 */
export async function readWindow(chunks: AsyncIterable<string> | Iterable<string>, options: WindowOptions): Promise<TextWindow> {
  const window = new LineWindow(options.offset, options.limit, options.maxLineChars, options.maxBytes);
  for await (const chunk of chunks) window.feed(chunk);
  return window.end();
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
export function renderReadLine(line: ReadLine): string {
  const body = line.text.includes('\r') ? line.text.replaceAll('\r', '␍') : line.text;
  const marker = line.fullLength === undefined ? '' : truncationMarker(codePoints(line.text), line.fullLength);
  return `${line.number}: ${body}${marker}`;
}
