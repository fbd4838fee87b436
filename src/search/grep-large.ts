// grep of a file over the seam's text limit: its bytes streamed (V7), checked as text as they
// come, and handed to the matcher in batches of whole lines, so memory is bounded by a batch.
import { TextCheck } from '../seam/text-stream.js';
import { LiteralLines, type Candidates } from './grep-bytes.js';
import type { FileSystem, FsTarget } from '../seam/index.js';

/** Bytes of whole lines per batch. */
const BATCH = 4 * 1024 * 1024;
/** A line longer than this cannot be matched in bounded memory: the file is skipped as too large. */
export const MAX_GREP_LINE = 64 * 1024 * 1024;

/** Gets the lines that may match, with their numbers (LiteralLines). */
export type CandidateSink = (found: Candidates) => Promise<void>;

interface LineSink {
  /** Whole lines decoded, the last without its break (`brokenAfter` false at the end of the file). */
  batch(text: string, brokenAfter: boolean): Promise<void>;
  /** With it, only the lines holding the literal's bytes are decoded, and go to `candidates`. */
  literal?: { readonly bytes: Uint8Array; candidates: CandidateSink };
}

/**
 * Streams `target` in whole lines, about `batchBytes` at a time, stopping when `enough` says so
 * (asked after each batch). Returns why it skipped the file instead: over `maxFileBytes`, or a
 * line too long to hold.
 */
export async function streamLines(
  fs: FileSystem,
  target: FsTarget,
  path: string,
  signal: AbortSignal,
  sink: LineSink,
  enough: () => boolean,
  maxFileBytes: number,
  batchBytes = BATCH,
): Promise<string | undefined> {
  // On the bytes, nothing is kept from a chunk but a copy of its unfinished line: read into reused memory.
  const stream = await fs.streamBytes(target, { signal, unversioned: true, reuse: sink.literal !== undefined });
  if (stream.size > maxFileBytes) {
    // Never read: the stream is let go at once.
    await stream.chunks[Symbol.asyncIterator]().return?.();
    return `${stream.size} bytes`;
  }
  const check = new TextCheck(`cannot read "${path}"`);
  const lines = sink.literal ? onBytes(sink.literal.bytes, sink.literal.candidates) : decoded(sink);
  let held = 0;
  for await (const chunk of stream.chunks) {
    const bytes = check.check(chunk);
    lines.feed(bytes);
    held += bytes.length;
    if (held < batchBytes) continue;
    if (lines.pending() === held) {
      // No line break yet: one line, held until it ends.
      if (held > MAX_GREP_LINE) return `a line over ${MAX_GREP_LINE} bytes`;
      continue;
    }
    await lines.flush(false);
    if (enough()) return undefined;
    held = lines.pending();
  }
  check.finish();
  await lines.flush(true);
  return undefined;
}

interface Lines {
  feed(bytes: Uint8Array): void;
  /** Bytes after the last line break. */
  pending(): number;
  /** Hands on the lines ended so far (`end`: and the last one). */
  flush(end: boolean): Promise<void>;
}

function onBytes(literal: Uint8Array, candidates: CandidateSink): Lines {
  const lines = new LiteralLines(literal);
  return {
    feed: (bytes) => lines.feed(bytes),
    pending: () => lines.pending,
    async flush(end) {
      if (end) lines.end();
      const found = lines.take();
      if (found !== undefined) await candidates(found);
    },
  };
}

/** Every line decoded: the chunks are held until a batch is handed on. */
function decoded(sink: LineSink): Lines {
  const decoder = new TextDecoder('utf-8', { ignoreBOM: false });
  let parts: Uint8Array[] = [];
  let open = 0;
  return {
    feed(bytes) {
      parts.push(bytes);
      const nl = asBuffer(bytes).lastIndexOf(10);
      open = nl === -1 ? open + bytes.length : bytes.length - nl - 1;
    },
    pending: () => open,
    async flush(end) {
      const all = Buffer.concat(parts);
      if (end) {
        parts = [];
        if (all.length > 0) await sink.batch(decoder.decode(all), false);
        return;
      }
      // Without the last break: `batch` gets whole lines. The break is decoded (then dropped) so
      // that a decoder given only an empty first line still takes a U+FEFF after it as text.
      const cut = all.length - open;
      parts = open > 0 ? [all.subarray(cut)] : [];
      await sink.batch(decoder.decode(all.subarray(0, cut), { stream: true }).slice(0, -1), true);
    },
  };
}

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
