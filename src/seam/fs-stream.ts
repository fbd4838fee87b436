import { FsError, throwIfAborted, toFsError } from './errors.js';
import { call } from './fs-call.js';
import type { FsContext } from './fs-context.js';
import { describeType } from './path.js';
import { releasing } from './releasing.js';
import { UNVERSIONED, type FileSystem, type FsBytesStream, type FsBytesStreamOptions, type FsProviderReadStream, type FsTarget } from './types.js';

/** Bytes per chunk when a whole read is handed out as a stream. */
const CHUNK = 1024 * 1024;

/**
 * streamBytes (V7): a file's bytes from a byte offset, in chunks, with its size and version. Over
 * the provider's `openRead` a file of any size; without it, the provider's `read`, bounded by the
 * text limit as every other read is.
 */
export function createStreamBytes(ctx: FsContext): FileSystem['streamBytes'] {
  const { provider, maxTextBytes } = ctx;
  return async function streamBytes(target: FsTarget, opts?: FsBytesStreamOptions): Promise<FsBytesStream> {
    ctx.checkTarget(target);
    const what = `cannot read "${target.displayPath}"`;
    const start = opts?.start ?? 0;
    if (typeof start !== 'number' || !Number.isSafeInteger(start) || start < 0) {
      throw new FsError('FS_INVALID_ARGUMENT', `start must be a non-negative integer, got ${describeType(start)}`);
    }
    const signal = opts?.signal;
    const unversioned = opts?.unversioned === true;
    const flags = { maxBytes: maxTextBytes, ...(signal ? { signal } : {}), ...(unversioned ? { unversioned } : {}) };
    const opened: FsProviderReadStream = await call(what, signal, async () => {
      if (provider.openRead) return provider.openRead(target, { ...flags, start, ...(opts?.reuse === true ? { reuse: true } : {}) });
      const { bytes, version } = await provider.read(target, flags);
      return { size: bytes.byteLength, version, chunks: slices(bytes, start) };
    });
    if (!unversioned && opened.version === undefined) throw new FsError('FS_IO_ERROR', `${what}: the provider's openRead gave no version`);
    return { size: opened.size, version: unversioned ? UNVERSIONED : opened.version!, chunks: checked(opened.chunks, signal, what) };
  };
}

async function* slices(bytes: Uint8Array, start: number): AsyncGenerator<Uint8Array> {
  for (let at = start; at < bytes.byteLength; at += CHUNK) yield bytes.subarray(at, Math.min(bytes.byteLength, at + CHUNK));
}

/**
 * The provider's chunks, the signal checked before each, every failure an FsError. A stream let
 * go before its first chunk still tells the provider, so it releases what it holds.
 */
function checked(chunks: AsyncIterable<Uint8Array>, signal: AbortSignal | undefined, what: string): AsyncIterableIterator<Uint8Array> {
  const source = chunks[Symbol.asyncIterator]();
  async function* run(): AsyncGenerator<Uint8Array> {
    try {
      for (let next = await source.next(); !next.done; next = await source.next()) {
        throwIfAborted(signal, what);
        yield next.value;
      }
    } catch (err) {
      throw toFsError(err, what);
    } finally {
      await source.return?.();
    }
  }
  return releasing(run(), () => source.return?.());
}
