// Writes and edits of files too large to hold (V7): the old bytes are streamed, never held.
import { FsError, throwIfAborted } from './errors.js';
import type { FsContext } from './fs-context.js';
import { checkWriteIntent } from './resolve.js';
import { streamEdit, type StreamEditResult } from './stream-edit.js';
import { encodeText } from './text.js';
import { TextCheck } from './text-stream.js';
import type { FsEditOutcome, FsEditRequest, FsProvider, FsProviderReadStream, FsSwapResult, FsTarget, FsVersion, FsWriteIntent } from './types.js';

type Streaming = FsProvider & Required<Pick<FsProvider, 'openRead' | 'swapFrom'>>;

/** The answer for a file over the text limit on a provider that cannot stream it: the limit, and the way forward. */
export function tooLargeToHold(what: string, maxTextBytes: number, cause: unknown): FsError {
  return new FsError(
    'FS_TOO_LARGE',
    `${what}: the existing file is larger than the ${maxTextBytes}-byte text limit, and this store cannot stream it; ` +
      'raise maxTextBytes, or replace the file as bytes (writeBytes)',
    { cause },
  );
}

export function canStream(provider: FsProvider): provider is Streaming {
  return provider.openRead !== undefined && provider.swapFrom !== undefined;
}

/** The swap's answer when the file changed between the read and the publication. */
function published(result: FsSwapResult, intent: FsWriteIntent | undefined, what: string) {
  if (result.ok) return result;
  const now = result.current;
  checkWriteIntent(intent, now.kind === 'present' ? now : undefined, what);
  throw new FsError('FS_CONFLICT', `${what}: the file changed while it was being edited; read it again and retry`);
}

async function open(provider: Streaming, target: FsTarget, intent: FsWriteIntent | undefined, what: string, signal: AbortSignal | undefined, atEnd = false) {
  let stream: FsProviderReadStream;
  try {
    stream = await provider.openRead(target, { maxBytes: Infinity, ...(atEnd ? { versionAtEnd: true } : {}), ...(signal ? { signal } : {}) });
  } catch (err) {
    if (err instanceof FsError && err.code === 'FS_NOT_FOUND') checkWriteIntent(intent, undefined, what);
    throw err;
  }
  const version = stream.version;
  try {
    if (version === undefined && !(atEnd && stream.versionRead)) throw new FsError('FS_IO_ERROR', `${what}: the provider's openRead gave no version`);
    // The intent (the policy's answer) comes before anything about the content.
    if (version !== undefined) checkWriteIntent(intent, { version }, what);
  } catch (err) {
    // Refused before a byte was read: the file opened is let go now, not at garbage collection.
    await release(stream);
    throw err;
  }
  return { stream, version };
}

/**
 * editText of a large file: matched while it is copied to the new file, one pass (E1–E7, L1–L3).
 * With a version to expect (the guard), the old bytes may be hashed in that same pass: the swap
 * then publishes only if they were that version, and the file still is.
 */
export function editLarge(
  ctx: FsContext,
  provider: Streaming,
  target: FsTarget,
  request: Required<FsEditRequest>,
  intent: FsWriteIntent | undefined,
  what: string,
  signal: AbortSignal | undefined,
): Promise<FsEditOutcome> {
  return ctx.locks.run(target.targetKey, async () => {
    const guarded = intent?.kind === 'replaceIfVersion' ? intent.version : undefined;
    const { stream, version } = await open(provider, target, intent, what, signal, guarded !== undefined);
    const result: StreamEditResult = { replacements: 0, lines: [] };
    const edited = streamEdit(stream.chunks, request, what, result);
    // Known only at the end: the bytes edited must be the guard's version, before anything is published.
    const source = version === undefined ? thenCheck(edited, () => checkWriteIntent(intent, readVersion(stream, what), what)) : edited;
    let swapped;
    try {
      const expect = { kind: 'present', version: version ?? guarded! } as const;
      swapped = await provider.swapFrom(target, { expect, source, ...(version === undefined ? { expectAtEnd: true } : {}), ...(signal ? { signal } : {}) });
    } catch (err) {
      // The intent comes before what the content says (not text, no match): checked now if it could not be then.
      if (version === undefined && err instanceof FsError && CONTENT_ERRORS.has(err.code)) await checkIntentNow(provider, target, stream, intent, what, signal);
      throw err;
    } finally {
      // A swap refused before it read the source: the file read is let go all the same.
      await release(stream);
    }
    const done = published(swapped, intent, what);
    if (done.version === undefined) throw new FsError('FS_IO_ERROR', `${what}: the provider's swap gave no version`);
    return { version: done.version, replacements: result.replacements, lines: result.lines };
  });
}

const CONTENT_ERRORS = new Set(['FS_NOT_TEXT', 'FS_EDIT_NOT_FOUND', 'FS_AMBIGUOUS_EDIT', 'FS_TOO_LARGE']);

function readVersion(stream: FsProviderReadStream, what: string): { version: FsVersion } {
  const version = stream.versionRead?.();
  if (version === undefined) throw new FsError('FS_IO_ERROR', `${what}: the provider's read stream gave no version at its end`);
  return { version };
}

/** `source`'s chunks, then `check` (which may throw) once they are all passed on. */
async function* thenCheck(source: AsyncIterable<Uint8Array>, check: () => void): AsyncGenerator<Uint8Array> {
  yield* source;
  check();
}

/** The intent against the file's version, from the stream when it was read to the end, else from the store. */
async function checkIntentNow(provider: Streaming, target: FsTarget, stream: FsProviderReadStream, intent: FsWriteIntent | undefined, what: string, signal: AbortSignal | undefined) {
  let version = stream.versionRead?.();
  if (version === undefined) {
    const info = await provider.stat(target, { ...(signal ? { signal } : {}) });
    if (info?.type !== 'file' || info.version === undefined) return checkWriteIntent(intent, undefined, what);
    version = info.version;
  }
  checkWriteIntent(intent, { version }, what);
}

/**
 * writeText over a large file: its BOM and line-ending style (L4/L5) found by streaming it, then
 * one swap of the new content, which the request bounds.
 */
export function writeTextLarge(
  ctx: FsContext,
  provider: Streaming,
  target: FsTarget,
  content: string,
  intent: FsWriteIntent | undefined,
  what: string,
  signal: AbortSignal | undefined,
) {
  return ctx.locks.run(target.targetKey, async () => {
    const { stream, version } = await open(provider, target, intent, what, signal);
    let style;
    try {
      style = await textStyle(stream.chunks, what);
    } finally {
      await release(stream);
    }
    let text = content;
    if (style !== undefined && !content.includes('\r\n') && content.includes('\n') && style.crlf > style.lf) text = content.replaceAll('\n', '\r\n');
    const bytes = encodeText(text, style?.bom ?? false);
    throwIfAborted(signal, what);
    // Asked for up front, open gives the version or throws.
    const done = published(await provider.swap(target, { expect: { kind: 'present', version: version! }, bytes, ...(signal ? { signal } : {}) }), intent, what);
    return { done, bytes };
  });
}

async function release(stream: FsProviderReadStream): Promise<void> {
  await stream.chunks[Symbol.asyncIterator]().return?.(undefined);
}

/** The BOM and line-break counts of streamed text; undefined when it is not text (then written as given). */
async function textStyle(chunks: AsyncIterable<Uint8Array>, what: string): Promise<{ bom: boolean; lf: number; crlf: number } | undefined> {
  const check = new TextCheck(what);
  let bom: boolean | undefined;
  let lf = 0;
  let crlf = 0;
  let prev = 0;
  try {
    for await (const chunk of chunks) {
      const bytes = check.check(chunk);
      if (bom === undefined && check.offset >= 3) bom = check.offset === bytes.length && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
      for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) {
        if ((i > 0 ? bytes[i - 1] : prev) === 13) crlf++;
        else lf++;
      }
      if (bytes.length > 0) prev = bytes[bytes.length - 1]!;
    }
    check.finish();
  } catch (err) {
    if (err instanceof FsError && err.code === 'FS_NOT_TEXT') return undefined;
    throw err;
  }
  return { bom: bom ?? false, lf, crlf };
}
