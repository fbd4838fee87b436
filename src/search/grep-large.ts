// grep of a file over the seam's text limit: its bytes streamed (V7), checked as text as they
// come, and handed to the matcher in batches of whole lines, so memory is bounded by a batch.
import { TextCheck } from '../seam/text-stream.js';
import { LiteralLines, type Candidates } from './grep-bytes.js';
import type { FileSystem, FsTarget } from '../seam/index.js';

/** Bytes of whole lines per batch. */
const BATCH = 4 * 1024 * 1024;
/** A line longer than this cannot be matched in bounded memory: the file is skipped as too large. */
export const MAX_GREP_LINE = 64 * 1024 * 1024;

/** Gets the lines of a batch that may match, with their numbers (LiteralLines). */
export type CandidateSink = (found: Candidates) => Promise<void>;

/**
 * Streams `target` in whole lines, stopping when `enough` says so. Without `literal`, each batch
 * goes to `batch` decoded (the last line without its break, `brokenAfter` false). With it, only
 * the lines holding the literal's bytes are decoded and go to `candidates`. Returns why it
 * skipped the file instead: over `maxFileBytes`, or a line too long to hold.
 */
export async function streamLines(
  fs: FileSystem,
  target: FsTarget,
  path: string,
  signal: AbortSignal,
  sink: { batch(text: string, brokenAfter: boolean): Promise<void>; literal?: { readonly bytes: Uint8Array; candidates: CandidateSink } },
  enough: () => boolean,
  maxFileBytes: number,
  batchBytes = BATCH,
): Promise<string | undefined> {
  const stream = await fs.streamBytes(target, { signal, unversioned: true });
  if (stream.size > maxFileBytes) {
    // Never read: the stream is let go at once.
    await stream.chunks[Symbol.asyncIterator]().return?.();
    return `${stream.size} bytes`;
  }
  const check = new TextCheck(`cannot read "${path}"`);
  const lines = sink.literal && new LiteralLines(sink.literal.bytes);
  const decoder = new TextDecoder('utf-8', { ignoreBOM: false });
  /** Hands on whole lines: decoded, or searched on their bytes. */
  const give = async (parts: Uint8Array[], final: boolean): Promise<void> => {
    if (lines === undefined) {
      const all = Buffer.concat(parts);
      // Without the last break: `batch` gets whole lines.
      if (all.length > 0) await sink.batch(final ? decoder.decode(all) : decoder.decode(all.subarray(0, -1), { stream: true }), !final);
      return;
    }
    const found = lines.find(parts, final);
    if (found !== undefined) await sink.literal!.candidates(found);
  };
  let parts: Uint8Array[] = [];
  let held = 0;
  for await (const chunk of stream.chunks) {
    const bytes = check.check(chunk);
    parts.push(bytes);
    held += bytes.length;
    if (held < batchBytes) continue;
    const cut = lastBreak(parts);
    if (cut === undefined) {
      if (held > MAX_GREP_LINE) return `a line over ${MAX_GREP_LINE} bytes`;
      parts = [Buffer.concat(parts)];
      continue;
    }
    const [k, nl] = cut;
    const last = parts[k]!;
    await give([...parts.slice(0, k), last.subarray(0, nl + 1)], false);
    if (enough()) return undefined;
    parts = [last.subarray(nl + 1), ...parts.slice(k + 1)].filter((p) => p.length > 0);
    held = parts.reduce((n, p) => n + p.length, 0);
  }
  check.finish();
  if (held > 0) await give(parts, true);
  return undefined;
}

/** The part and offset of the last line break in `parts`, if any. */
function lastBreak(parts: readonly Uint8Array[]): [number, number] | undefined {
  for (let k = parts.length - 1; k >= 0; k--) {
    const p = parts[k]!;
    const nl = (Buffer.isBuffer(p) ? p : Buffer.from(p.buffer, p.byteOffset, p.byteLength)).lastIndexOf(10);
    if (nl !== -1) return [k, nl];
  }
  return undefined;
}
