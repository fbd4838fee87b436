import { FsError, isFsError, type FsTarget, type FsVersion } from '../seam/index.js';
import type { Tool } from '../harness/index.js';
import { shownPath } from '../harness/tools.js';
import {
  DEFAULT_TOOL_LIMITS,
  createReadSchema,
  formatBytes,
  quickReadArgs,
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
import { LineWindow, renderReadLine, type ReadLine, type TextWindow, type WindowOptions } from './read-window.js';
import { readLargeWindow } from './read-large.js';
import { TextCheck } from '../seam/text-stream.js';

export { readWindow, renderReadLine, type ReadLine, type TextWindow, type WindowOptions } from './read-window.js';

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
  /** Set when a file too large to hold was read only past the window: `totalLines` is a lower bound. */
  readonly totalLinesAtLeast?: true;
}

export { isImageValue, type ReadImageValue };

/** The value of a read: lines of text, or an image (`type: 'image'`). */
export type ReadResultValue = ReadValue | ReadImageValue;

/** The footer: capped by bytes, more lines remain, or end of file (exactly one). */
export function readFooter(value: ReadValue): string {
  const last = value.lines.at(-1);
  const end = last === undefined ? value.offset - 1 : last.number;
  const total = value.totalLines;
  if (end < total) {
    const of = value.totalLinesAtLeast ? `at least ${total}` : `${total}`;
    const showing = `Showing lines ${value.offset}-${end} of ${of}. Use offset=${end + 1} to continue.`;
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

/**
 * readWindow over a stream whose first chunk has already been taken: fed straight from the
 * iterator, as an async generator between the two costs several µs per call.
 */
async function windowOf(first: IteratorResult<string>, rest: AsyncIterator<string>, options: WindowOptions): Promise<TextWindow> {
  const window = new LineWindow(options.offset, options.limit, options.maxLineChars, options.maxBytes);
  if (!first.done) {
    window.feed(first.value);
    for (let next = await rest.next(); !next.done; next = await rest.next()) window.feed(next.value);
  }
  return window.end();
}

/** The value of a read of a window, recorded as observed; past the end nothing was shown, so nothing is. */
function shown(
  call: ToolCall,
  target: FsTarget,
  offset: number,
  window: TextWindow & { readonly totalLinesAtLeast?: true },
  stream: { readonly version: FsVersion; readonly bom: boolean },
): ReadValue {
  if (offset > window.totalLines && !(offset === 1 && window.totalLines === 0)) {
    const n = window.totalLines;
    throw new FsError(
      'FS_INVALID_ARGUMENT',
      `offset ${offset} is past the end of "${target.displayPath}", which has ${n} line${n === 1 ? '' : 's'}` + (n > 0 ? `; use an offset from 1 to ${n}` : ''),
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
    ...(window.totalLinesAtLeast ? { totalLinesAtLeast: true } : {}),
  };
}

/**
 * A window of a file too large to hold, streamed from its start in bounded memory (V7). The
 * version is the whole file's, so the read counts as an observation like any other.
 */
async function readLarge(call: ToolCall, target: FsTarget, offset: number, limit: number, limits: FsToolLimits): Promise<ReadValue> {
  const { signal } = call;
  const what = `cannot read "${target.displayPath}"`;
  // The version hashes the whole file: a file whose first chunk is not text is refused before that.
  const peek = await call.fs.streamBytes(target, { unversioned: true, ...(signal ? { signal } : {}) });
  for await (const first of peek.chunks) {
    new TextCheck(what).check(first);
    break;
  }
  const stream = await call.fs.streamBytes(target, signal ? { signal } : {});
  const window = await readLargeWindow(stream.chunks, { offset, limit, maxLineChars: limits.maxLineChars, maxBytes: limits.maxBytes }, what);
  return shown(call, target, offset, window, { version: stream.version, bom: window.bom });
}

export function createReadTool(limits: FsToolLimits = DEFAULT_TOOL_LIMITS): Tool<ReadArgs, ReadResultValue> {
  return {
    name: 'read',
    title: 'Read file',
    hints: { readOnlyHint: true, idempotentHint: true },
    outputSchema: z.union([readOutputSchema, readImageOutputSchema]),
    description: readDescription(limits),
    schema: createReadSchema(limits),
    quickParse: quickReadArgs,
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
          // Too large to hold: streamed to the window instead (where the provider can stream).
          if (isFsError(err, 'FS_TOO_LARGE')) return await readLarge(call, target, offset, limit, limits);
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
        const window = await windowOf(first, chunks, { offset, limit, maxLineChars: limits.maxLineChars, maxBytes: limits.maxBytes });
        return shown(call, target, offset, window, stream);
      } catch (err) {
        throw withRemedy(err, `cannot read "${args.file_path}"`);
      }
    },
  };
}
