import { FsError, isFsError, type FsVersion } from '../seam/index.js';
import type { Tool } from '../harness/index.js';
import {
  DEFAULT_TOOL_LIMITS,
  createReadSchema,
  formatBytes,
  readDescription,
  type FsToolLimits,
  type ReadArgs,
} from './schemas.js';
import { withRemedy } from './errors.js';

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

/**
 * Cuts a window of numbered lines out of streamed text, in one pass and bounded memory: only
 * lines inside the window are kept, each at most `maxLineChars` code points (a surrogate pair is
 * never split). Every line is counted, so the total is exact. Lines end at LF; the CR of a CRLF
 * is dropped and a lone CR is kept. The window holds at most `limit` lines and `maxBytes` of
 * rendered output; its first line is always returned, cut further if it alone exceeds the cap.
 */
export async function readWindow(chunks: AsyncIterable<string>, options: WindowOptions): Promise<TextWindow> {
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
export function renderRead(value: ReadValue): string {
  const body = value.lines.length === 0 ? readFooter(value) : `${value.lines.map(renderReadLine).join('\n')}\n\n${readFooter(value)}`;
  return `<path>${value.path}</path>\n<type>file</type>\n<content>\n${body}\n</content>`;
}

export function createReadTool(limits: FsToolLimits = DEFAULT_TOOL_LIMITS): Tool<ReadArgs, ReadValue> {
  return {
    name: 'read',
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
          throw err;
        }
        const window = await readWindow(stream.chunks, { offset, limit, maxLineChars: limits.maxLineChars, maxBytes: limits.maxBytes });
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
