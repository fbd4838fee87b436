import { FsError, throwIfAborted } from './errors.js';
import { call, dueToYield, yieldToTimers } from './fs-call.js';
import type { FsContext } from './fs-context.js';
import { checkText, decodeText, decodeValidUtf8, validUtf8ChunkEnd } from './text.js';
import { UNVERSIONED } from './types.js';
import { withVersion } from './listing.js';
import { describeType } from './path.js';
import type { FileSystem, FsBytesRead, FsInfo, FsOpOptions, FsStatOptions, FsStreamOptions, FsTarget, FsTextRead, FsTextStream } from './types.js';

/** Bytes of the file per streamText chunk. */
const STREAM_CHUNK = 64 * 1024;

/** The reads: a target's info, its text (T1) whole or in chunks, and its bytes. */
export function createReadOps(ctx: FsContext): Pick<FileSystem, 'stat' | 'readText' | 'streamText' | 'readBytes'> {
  const { provider, maxTextBytes } = ctx;

  async function readChecked(target: FsTarget, verb: string, opts: FsOpOptions | undefined): Promise<FsTextRead> {
    ctx.checkTarget(target);
    const what = `cannot ${verb} "${target.displayPath}"`;
    const signal = opts?.signal;
    const current = await call(what, signal, () => provider.read(target, { maxBytes: maxTextBytes, signal, shared: true }));
    throwIfAborted(signal, what);
    const { text, bom } = decodeText(current.bytes, what);
    return { text, bom, version: current.version, size: current.bytes.byteLength };
  }

  return {
    async stat(target: FsTarget, opts?: FsStatOptions): Promise<FsInfo | undefined> {
      ctx.checkTarget(target);
      const what = `cannot stat "${target.displayPath}"`;
      const signal = opts?.signal;
      const versioned = opts?.versioned ?? true;
      if (typeof versioned !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `${what}: versioned must be a boolean, got ${describeType(versioned)}`);
      const info = await call(what, signal, async () => {
        const found = await provider.stat(target, { signal, ...(versioned ? {} : { unversioned: true }) });
        return found === undefined ? undefined : withVersion(provider, target, found, versioned, signal);
      });
      throwIfAborted(signal, what);
      return info;
    },

    readText: (target, opts) => readChecked(target, 'read', opts),

    async streamText(target: FsTarget, opts?: FsStreamOptions): Promise<FsTextStream> {
      ctx.checkTarget(target);
      const what = `cannot read "${target.displayPath}"`;
      const signal = opts?.signal;
      const unversioned = opts?.unversioned === true;
      const current = await call(what, signal, () =>
        provider.read(target, { maxBytes: maxTextBytes, signal, shared: true, ...(unversioned ? { unversioned } : {}) }),
      );
      throwIfAborted(signal, what);
      return textStream(current.bytes, unversioned ? UNVERSIONED : current.version, signal, what);
    },

    async readBytes(target: FsTarget, opts: FsOpOptions & { maxBytes: number; unversioned?: boolean }): Promise<FsBytesRead> {
      ctx.checkTarget(target);
      const maxBytes = opts?.maxBytes;
      if (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes < 0) {
        throw new FsError('FS_INVALID_ARGUMENT', `maxBytes must be a non-negative integer, got ${String(maxBytes)}`);
      }
      const what = `cannot read "${target.displayPath}"`;
      const unversioned = opts.unversioned === true;
      const current = await call(what, opts.signal, () => provider.read(target, { maxBytes, signal: opts.signal, ...(unversioned ? { unversioned } : {}) }));
      throwIfAborted(opts.signal, what);
      return { bytes: current.bytes, version: unversioned ? UNVERSIONED : current.version };
    },
  };
}

/**
 * Checked whole (T1) before the first chunk, then decoded a chunk at a time, so no string of the
 * whole file is ever built.
 */
function textStream(bytes: Uint8Array, version: FsTextStream['version'], signal: AbortSignal | undefined, what: string): FsTextStream {
  const { body, bom } = checkText(bytes, what);
  return { version, bom, size: bytes.byteLength, chunks: textChunks(body, signal, what) };
}

/**
 * What an unversioned `streamText` of `target` gives for these bytes, its whole content (e.g.
 * returned by `searchCandidates`): FS_NOT_TEXT when they are not text (T1).
 */
export function textStreamOf(target: FsTarget, bytes: Uint8Array, signal?: AbortSignal): FsTextStream {
  const what = `cannot read "${target.displayPath}"`;
  throwIfAborted(signal, what);
  return textStream(bytes, UNVERSIONED, signal, what);
}

/**
 * The chunks of streamText: valid UTF-8 decoded STREAM_CHUNK bytes at a time, the signal checked
 * before each. A plain iterator rather than an async generator, which costs several µs per call.
 */
function textChunks(body: Uint8Array, signal: AbortSignal | undefined, what: string): AsyncIterableIterator<string> {
  let start = 0;
  const finished: IteratorResult<string> = { value: undefined, done: true };
  const chunk = (): Promise<IteratorResult<string>> => {
    if (start >= body.length) return Promise.resolve(finished);
    try {
      throwIfAborted(signal, what);
    } catch (err) {
      // Like a generator that threw: nothing more after the error.
      start = body.length;
      return Promise.reject(err);
    }
    const end = validUtf8ChunkEnd(body, start, STREAM_CHUNK);
    const value = decodeValidUtf8(body.subarray(start, end));
    start = end;
    return Promise.resolve({ value, done: false });
  };
  const iterator: AsyncIterableIterator<string> = {
    next() {
      if (start >= body.length) return Promise.resolve(finished);
      if (dueToYield()) return yieldToTimers().then(() => chunk());
      return chunk();
    },
    return() {
      start = body.length;
      return Promise.resolve(finished);
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
