import { FsError, isFsError, type FsTarget, type FsVersion } from '../seam/index.js';
import type { Tool } from '../harness/index.js';
import { shownPath } from '../harness/tools.js';
import {
  DEFAULT_TOOL_LIMITS,
  createReadSchema,
  formatBytes,
  readDescription,
  type FsToolLimits,
  type ReadArgs,
} from './schemas.js';
import { withRemedy } from './errors.js';
import { readImageOutputSchema, readOutputSchema } from './outputs.js';
import { isImageValue, type ImageMediaType, type ReadImageValue } from '../harness/image.js';
import { looksLikeTextImage, sniffImage } from './image.js';
import { z } from 'zod';
import type { ToolCall } from '../harness/index.js';

export interface ReadLine {
  /** 1-based line number. */
  readonly number: number;
  /** The line without its line break (the CR of a CRLF removed); only its beginning when cut. */
  readonly text: string;
  /** Set when `text` was cut: the length of the whole line in characters (code points). */
  readonly fullLength?: number;
}

export interface ReadValue {
  /** The path as the provider displays it. */
  readonly path: string;
  /** Version of exactly the bytes these lines were decoded from. */
  readonly version: FsVersion;
  /** Whether the file starts with a UTF-8 BOM (never shown). */
  readonly bom: boolean;
  /** The first line number requested. */
  readonly offset: number;
  readonly lines: readonly ReadLine[];
  /** Lines in the whole file; a final line break does not start another line. */
  readonly totalLines: number;
  /** Set when the byte cap, not the line limit, ended the window: the cap in bytes. */
  readonly cappedAtBytes?: number;
}

export { isImageValue, type ReadImageValue };

/** The value of a read: lines of text, or an image (`type: 'image'`). */
export type ReadResultValue = ReadValue | ReadImageValue;

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
class LineWindow {
  readonly lines: ReadLine[] = [];
  lineNo = 1;
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
  ) {}

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
 * never split). Every line is counted, so the total is exact. Lines end at LF; the CR of a CRLF
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

/** The footer: capped by bytes, more lines remain, or end of file (exactly one). */
export function readFooter(value: ReadValue): string {
  const last = value.lines.at(-1);
  const end = last === undefined ? value.offset - 1 : last.number;
  const total = value.totalLines;
  if (end < total) {
    const showing = `Showing lines ${value.offset}-${end} of ${total}. Use offset=${end + 1} to continue.`;
    return value.cappedAtBytes !== undefined ? `(Output capped at ${formatBytes(value.cappedAtBytes)}. ${showing})` : `(${showing})`;
  }
  if (total === 0) return '(End of file - the file is empty)';
  return `(End of file - total ${total} line${total === 1 ? '' : 's'})`;
}

/**
 * The model text of a read: the path/type/content envelope, `N: text` lines, a blank line and one
 * footer. With no lines to show, the footer stands alone.
 */
export function renderRead(value: ReadResultValue): string {
  if (isImageValue(value)) {
    const what = `${value.mediaType} image, ${value.width}x${value.height} px, ${value.size} byte${value.size === 1 ? '' : 's'}`;
    return `<path>${shownPath(value.path)}</path>\n<type>image</type>\n<content>\n${what}\n</content>`;
  }
  const body = value.lines.length === 0 ? readFooter(value) : `${value.lines.map(renderReadLine).join('\n')}\n\n${readFooter(value)}`;
  return `<path>${shownPath(value.path)}</path>\n<type>file</type>\n<content>\n${body}\n</content>`;
}

/** The most bytes read to find out whether a non-text file is an image (its size is then checked against maxImageBytes). */
const IMAGE_SNIFF_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The image at `target`, or undefined when its bytes are not one of the four formats (the caller
 * then reports what it found). Recorded as observed at the version of exactly these bytes.
 */
async function readImage(call: ToolCall, target: FsTarget, limits: FsToolLimits, notText?: FsError): Promise<ReadImageValue | undefined> {
  const { signal } = call;
  let read;
  try {
    read = await call.fs.readBytes(target, { maxBytes: Math.max(limits.maxImageBytes, IMAGE_SNIFF_MAX_BYTES), ...(signal ? { signal } : {}) });
  } catch (err) {
    if (isFsError(err, 'FS_TOO_LARGE')) return undefined;
    throw err;
  }
  const image = sniffImage(read.bytes);
  if (image === undefined) return undefined;
  const size = read.bytes.byteLength;
  if ('problem' in image) {
    // What the text decoder found still leads; the note says why it is not shown as an image either.
    const found = notText?.message ?? `cannot read "${target.displayPath}"`;
    throw new FsError('FS_NOT_TEXT', `${found}; it starts like a ${FORMAT_NAMES[image.mediaType]} image, but ${image.problem}`);
  }
  if (size > limits.maxImageBytes) {
    throw new FsError(
      'FS_TOO_LARGE',
      `cannot read "${target.displayPath}": it is a ${image.mediaType} image of ${size} bytes; the limit for images is ${formatBytes(limits.maxImageBytes)} (${limits.maxImageBytes} bytes)`,
    );
  }
  call.events.observed(target, { kind: 'present', version: read.version }, call.owner);
  return {
    type: 'image',
    path: target.displayPath,
    version: read.version,
    mediaType: image.mediaType,
    data: Buffer.from(read.bytes.buffer, read.bytes.byteOffset, read.bytes.byteLength).toString('base64'),
    size,
    width: image.width,
    height: image.height,
  };
}

const FORMAT_NAMES: Record<ImageMediaType, string> = { 'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/gif': 'GIF', 'image/webp': 'WebP' };

/** The chunks of a stream whose first chunk has already been taken. */
async function* withFirst(first: IteratorResult<string>, rest: AsyncIterator<string>): AsyncGenerator<string> {
  if (first.done) return;
  yield first.value;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

export function createReadTool(limits: FsToolLimits = DEFAULT_TOOL_LIMITS): Tool<ReadArgs, ReadResultValue> {
  return {
    name: 'read',
    title: 'Read file',
    hints: { readOnlyHint: true, idempotentHint: true },
    outputSchema: z.union([readOutputSchema, readImageOutputSchema]),
    description: readDescription(limits),
    schema: createReadSchema(limits),
    render: renderRead,
    async execute(args, call) {
      try {
        const offset = args.offset ?? 1;
        const limit = Math.min(args.limit ?? limits.maxLines, limits.maxLines);
        const { signal } = call;
        const target = await call.fs.resolve(args.file_path, { cwd: call.cwd, ...(signal ? { signal } : {}) });
        let stream;
        try {
          stream = await call.fs.streamText(target, signal ? { signal } : {});
        } catch (err) {
          if (isFsError(err, 'FS_NOT_FOUND')) call.events.observed(target, { kind: 'absent' }, call.owner);
          if (isFsError(err, 'FS_NOT_TEXT')) {
            const image = await readImage(call, target, limits, err);
            if (image !== undefined) return image;
          }
          throw err;
        }
        // A GIF or WebP header can decode as text: look at the start before showing it as lines.
        const chunks = stream.chunks[Symbol.asyncIterator]();
        const first = await chunks.next();
        if (!first.done && looksLikeTextImage(first.value)) {
          const image = await readImage(call, target, limits);
          if (image !== undefined) return image;
        }
        const window = await readWindow(withFirst(first, chunks), { offset, limit, maxLineChars: limits.maxLineChars, maxBytes: limits.maxBytes });
        // Past the end nothing was shown, so nothing is recorded.
        if (offset > window.totalLines && !(offset === 1 && window.totalLines === 0)) {
          const n = window.totalLines;
          throw new FsError(
            'FS_INVALID_ARGUMENT',
            `offset ${offset} is past the end of "${target.displayPath}", which has ${n} line${n === 1 ? '' : 's'}` +
              (n > 0 ? `; use an offset from 1 to ${n}` : ''),
          );
        }
        call.events.observed(target, { kind: 'present', version: stream.version }, call.owner);
        return {
          path: target.displayPath,
          version: stream.version,
          bom: stream.bom,
          offset,
          lines: window.lines,
          totalLines: window.totalLines,
          ...(window.cappedAtBytes !== undefined ? { cappedAtBytes: window.cappedAtBytes } : {}),
        };
      } catch (err) {
        throw withRemedy(err, `cannot read "${args.file_path}"`);
      }
    },
  };
}
