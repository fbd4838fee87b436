// grep of a file over the seam's text limit: its bytes streamed (V7), checked as text as they
// come, and handed to the matcher in batches of whole lines, so memory is bounded by a batch.
import { TextCheck } from '../seam/text-stream.js';
import type { FileSystem, FsTarget } from '../seam/index.js';

/** Bytes of whole lines per batch. */
const BATCH = 4 * 1024 * 1024;
/** A line longer than this cannot be matched in bounded memory: the file is skipped as too large. */
export const MAX_GREP_LINE = 64 * 1024 * 1024;

/**
 * Streams `target` to `batch` in whole lines (the last one without its break, `brokenAfter`
 * false). Stops when `enough` says so. Returns why it skipped the file instead: over
 * `maxFileBytes`, or a line too long to hold.
 */
export async function streamLines(
  fs: FileSystem,
  target: FsTarget,
  path: string,
  signal: AbortSignal,
  batch: (text: string, brokenAfter: boolean) => Promise<void>,
  enough: () => boolean,
  maxFileBytes: number,
  prefilter?: { readonly literal: Uint8Array; skip(lines: number): void },
): Promise<string | undefined> {
  const stream = await fs.streamBytes(target, { signal, unversioned: true });
  if (stream.size > maxFileBytes) {
    // Never read: the stream is let go at once.
    await stream.chunks[Symbol.asyncIterator]().return?.();
    return `${stream.size} bytes`;
  }
  const check = new TextCheck(`cannot read "${path}"`);
  const decoder = new TextDecoder('utf-8', { ignoreBOM: false });
  let parts: Uint8Array[] = [];
  let held = 0;
  for await (const chunk of stream.chunks) {
    const bytes = check.check(chunk);
    parts.push(bytes);
    held += bytes.length;
    if (held < BATCH) continue;
    const all = Buffer.concat(parts);
    const nl = all.lastIndexOf(10);
    if (nl === -1) {
      if (all.length > MAX_GREP_LINE) return `a line over ${MAX_GREP_LINE} bytes`;
      parts = [all];
      continue;
    }
    // Without the last break: the batch is whole lines, with a break after the last. A batch
    // without the pattern's literal text cannot match: only its lines are counted.
    if (prefilter !== undefined && all.indexOf(prefilter.literal) === -1 && !(held === all.length && startsWithBom(all))) prefilter.skip(countLf(all, nl));
    else await batch(decoder.decode(all.subarray(0, nl), { stream: true }), true);
    if (enough()) return undefined;
    parts = [all.subarray(nl + 1)];
    held = parts[0]!.length;
  }
  check.finish();
  const rest = Buffer.concat(parts);
  if (rest.length > 0) await batch(decoder.decode(rest), false);
  return undefined;
}

const startsWithBom = (b: Uint8Array) => b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;

/** Line breaks in `b` up to and including the one at `last`. */
function countLf(b: Buffer, last: number): number {
  let n = 0;
  for (let i = b.indexOf(10); i !== -1 && i <= last; i = b.indexOf(10, i + 1)) n++;
  return n;
}

/**
 * The text every match of `re` contains, when its source is plain letters, digits, spaces and
 * a few punctuation marks, matched case-sensitively; else undefined.
 */
export function literalOf(re: RegExp): Uint8Array | undefined {
  if (re.flags.includes('i')) return undefined;
  return /^[A-Za-z0-9 _\-,:;=<>'"]+$/.test(re.source) ? Buffer.from(re.source, 'utf8') : undefined;
}
