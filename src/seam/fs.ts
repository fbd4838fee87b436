import { setImmediate } from 'node:timers';
import { FsError, isFsError, throwIfAborted, toFsError } from './errors.js';
import { applyEdit } from './edit.js';
import { canonicalPath, describeType, isWithin } from './path.js';
import {
  assertWritableText,
  checkText,
  crlfToLf,
  decodeText,
  decodeValidUtf8,
  encodeText,
  textForWrite,
  validUtf8ChunkEnd,
} from './text.js';
import type {
  FileSystem,
  FsBytesRead,
  FsEditOutcome,
  FsEditRequest,
  FsInfo,
  FsOpOptions,
  FsProvider,
  FsResolveOptions,
  FsTarget,
  FsTextRead,
  FsTextStream,
  FsVersion,
  FsWriteIntent,
  FsWriteOutcome,
} from './types.js';

export interface CreateFsOptions {
  /** Default directory for relative paths (default: the provider's cwd, else its root, else `/`). */
  readonly cwd?: string;
  /** Largest file readText/streamText/editText will load, in bytes (default 256 MiB). */
  readonly maxTextBytes?: number;
}

export const DEFAULT_MAX_TEXT_BYTES = 256 * 1024 * 1024;
/** Bytes of the file per streamText chunk. */
const STREAM_CHUNK = 64 * 1024;

/**
 * Turns a storage provider into the `ctx.fs` contract. All path rules (P1, lexical part of P2),
 * text rules (T1, L1–L5) and the edit engine (E1–E7) live here, once, for every provider.
 */
export function createFs(provider: FsProvider, options: CreateFsOptions = {}): FileSystem {
  const root = provider.root === undefined ? undefined : canonicalPath(provider.root, '/');
  const cwd = canonicalPath(options.cwd ?? provider.cwd ?? root ?? '/', '/');
  if (root !== undefined && !isWithin(root, cwd)) {
    throw new FsError('FS_OUTSIDE_ROOT', `cwd "${cwd}" is outside the root "${root}"`);
  }
  const maxTextBytes = options.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES;

  async function call<T>(what: string, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    throwIfAborted(signal, what);
    if (dueToYield()) {
      await yieldToTimers();
      throwIfAborted(signal, what);
    }
    try {
      return await fn();
    } catch (err) {
      throw toFsError(err, what);
    }
  }

  async function readChecked(target: FsTarget, verb: string, opts: FsOpOptions | undefined): Promise<FsTextRead> {
    checkTarget(target);
    const what = `cannot ${verb} "${target.displayPath}"`;
    const signal = opts?.signal;
    const current = await call(what, signal, () => provider.read(target, { maxBytes: maxTextBytes, signal }));
    throwIfAborted(signal, what);
    const { text, bom } = decodeText(current.bytes, what);
    return { text, bom, version: current.version, size: current.bytes.byteLength };
  }

  const fs: FileSystem = {
    cwd,
    ...(root === undefined ? {} : { root }),

    async resolve(path: string, opts?: FsResolveOptions): Promise<FsTarget> {
      const signal = opts?.signal;
      throwIfAborted(signal, 'cannot resolve path');
      const abs = canonicalPath(path, opts?.cwd === undefined ? cwd : canonicalPath(opts.cwd, cwd));
      if (root !== undefined && !isWithin(root, abs)) {
        throw new FsError('FS_OUTSIDE_ROOT', `path "${path}" resolves to "${abs}", which is outside the root "${root}"`);
      }
      const target = await call(`cannot resolve "${abs}"`, signal, () => provider.resolve(abs, { signal }));
      throwIfAborted(signal, `cannot resolve "${abs}"`); // a provider may finish without looking at the signal
      checkTarget(target);
      return target;
    },

    contains(parent: FsTarget, child: FsTarget): boolean {
      checkTarget(parent);
      checkTarget(child);
      return provider.contains ? provider.contains(parent, child) : isWithin(parent.targetKey, child.targetKey);
    },

    async stat(target: FsTarget, opts?: FsOpOptions): Promise<FsInfo | undefined> {
      checkTarget(target);
      const what = `cannot stat "${target.displayPath}"`;
      const info = await call(what, opts?.signal, () => provider.stat(target, { signal: opts?.signal }));
      throwIfAborted(opts?.signal, what);
      return info;
    },

    readText: (target, opts) => readChecked(target, 'read', opts),

    async streamText(target: FsTarget, opts?: FsOpOptions): Promise<FsTextStream> {
      checkTarget(target);
      const what = `cannot read "${target.displayPath}"`;
      const signal = opts?.signal;
      const current = await call(what, signal, () => provider.read(target, { maxBytes: maxTextBytes, signal }));
      throwIfAborted(signal, what);
      // Checked whole (T1) before the first chunk, then decoded a chunk at a time, so no string
      // of the whole file is ever built.
      const { body, bom } = checkText(current.bytes, what);
      return { version: current.version, bom, size: current.bytes.byteLength, chunks: textChunks(body, signal, what) };
    },

    async readBytes(target: FsTarget, opts: FsOpOptions & { maxBytes: number }): Promise<FsBytesRead> {
      checkTarget(target);
      const maxBytes = opts?.maxBytes;
      if (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes < 0) {
        throw new FsError('FS_INVALID_ARGUMENT', `maxBytes must be a non-negative integer, got ${String(maxBytes)}`);
      }
      const what = `cannot read "${target.displayPath}"`;
      const current = await call(what, opts.signal, () => provider.read(target, { maxBytes, signal: opts.signal }));
      throwIfAborted(opts.signal, what);
      return { bytes: current.bytes, version: current.version };
    },

    async listDir(target: FsTarget, opts?: FsOpOptions) {
      checkTarget(target);
      const what = `cannot list "${target.displayPath}"`;
      const entries = await call(what, opts?.signal, () => provider.listDir(target, { signal: opts?.signal }));
      throwIfAborted(opts?.signal, what);
      return entries;
    },

    async writeText(target: FsTarget, content: string, intent?: FsWriteIntent, opts?: FsOpOptions): Promise<FsWriteOutcome> {
      checkTarget(target);
      assertWritableText(content, 'content');
      checkIntent(intent, true);
      const what = `cannot write "${target.displayPath}"`;
      let size = 0;
      const done = await call(what, opts?.signal, () =>
        provider.write(target, {
          ...(intent ? { intent } : {}),
          signal: opts?.signal,
          produce: (current) => {
            const bytes = textForWrite(content, current?.bytes);
            size = bytes.byteLength;
            return bytes;
          },
        }),
      );
      return { operation: done.created ? 'create' : 'update', version: done.version, size };
    },

    async writeBytes(target: FsTarget, bytes: Uint8Array, intent?: FsWriteIntent, opts?: FsOpOptions): Promise<FsWriteOutcome> {
      checkTarget(target);
      if (!(bytes instanceof Uint8Array)) {
        throw new FsError('FS_INVALID_ARGUMENT', `bytes must be a Uint8Array, got ${describeType(bytes)}`);
      }
      checkIntent(intent, true);
      const what = `cannot write "${target.displayPath}"`;
      const copy = new Uint8Array(bytes);
      const done = await call(what, opts?.signal, () =>
        provider.write(target, { ...(intent ? { intent } : {}), signal: opts?.signal, produce: () => copy }),
      );
      return { operation: done.created ? 'create' : 'update', version: done.version, size: copy.byteLength };
    },

    async editText(
      target: FsTarget,
      edit: FsEditRequest,
      guard?: { readonly version: FsVersion },
      opts?: FsOpOptions,
    ): Promise<FsEditOutcome> {
      checkTarget(target);
      const request = checkEdit(edit);
      if (guard !== undefined) checkIntent({ kind: 'replaceIfVersion', version: guard?.version }, false);
      const what = `cannot edit "${target.displayPath}"`;
      const signal = opts?.signal;
      // Guard failures come from the provider's write and name it; say what the caller asked for.
      const asEdit = (fn: () => Promise<FsEditOutcome>) =>
        fn().catch((err: unknown) => {
          const prefix = `cannot write "${target.displayPath}"`;
          if (!isFsError(err) || !err.message.startsWith(prefix)) throw err;
          throw new FsError(err.code, `${what}${err.message.slice(prefix.length)}`, { cause: err });
        });
      if (provider.editText) {
        const native = provider.editText.bind(provider);
        return asEdit(() => call(what, signal, () => native(target, request, guard, { signal })));
      }
      return asEdit(() => editByWrite(target, request, guard, what, signal));
    },

    async remove(target: FsTarget, intent?: FsWriteIntent, opts?: FsOpOptions): Promise<void> {
      checkTarget(target);
      checkIntent(intent, false);
      const what = `cannot remove "${target.displayPath}"`;
      await call(what, opts?.signal, () => provider.remove(target, { ...(intent ? { intent } : {}), signal: opts?.signal }));
    },
  };

  /** The seam's edit over the provider's one mutating primitive. */
  async function editByWrite(
    target: FsTarget,
    request: FsEditRequest,
    guard: { readonly version: FsVersion } | undefined,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<FsEditOutcome> {
    let outcome: Omit<FsEditOutcome, 'version'> | undefined;
    const done = await call(what, signal, () =>
      provider.write(target, {
        ...(guard ? { intent: { kind: 'replaceIfVersion', version: guard.version } } : {}),
        signal,
        produce: (current) => {
          if (current === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
          if (current.bytes.byteLength > maxTextBytes) {
            throw new FsError('FS_TOO_LARGE', `${what}: ${current.bytes.byteLength} bytes exceeds the ${maxTextBytes}-byte text limit`);
          }
          const decoded = decodeText(current.bytes, what);
          const result = applyEdit(decoded.text, request.oldString, request.newString, request.replaceAll);
          if (!result.ok) throw new FsError(result.error.code, `${what}: ${result.error.message}`);
          outcome = { replacements: result.replacements, lines: result.lines };
          return encodeEdited(result.text, decoded.bom);
        },
      }),
    );
    if (outcome === undefined) throw new FsError('FS_IO_ERROR', `${what}: the provider did not apply the edit`);
    return { version: done.version, ...outcome };
  }
  return fs;
}

/**
 * A provider that never waits for I/O (the memory one) would otherwise keep the event loop to
 * itself through a long run of calls, a search or an agent loop: no timer, and so no
 * `AbortSignal.timeout`, could fire until it ended. Every call checks the clock, and one that
 * comes 10 ms after the last yield lets timers and I/O run first. `setImmediate` is taken from
 * node:timers, which fake timers in a caller's tests leave alone.
 */
const YIELD_EVERY_MS = 10;
let lastYield = performance.now();

function dueToYield(): boolean {
  return performance.now() - lastYield >= YIELD_EVERY_MS;
}

function yieldToTimers(): Promise<void> {
  return new Promise((resolve) =>
    setImmediate(() => {
      lastYield = performance.now();
      resolve();
    }),
  );
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

/**
 * E5/L4: puts back exactly the BOM that decodeText split off. Unlike encodeText, a text that itself
 * starts with U+FEFF still gets the BOM, or an edit elsewhere would drop one.
 */
function encodeEdited(text: string, bom: boolean): Uint8Array {
  const body = encodeText(text, false);
  if (!bom) return body;
  const out = new Uint8Array(body.byteLength + 3);
  out.set([0xef, 0xbb, 0xbf], 0);
  out.set(body, 3);
  return out;
}

function checkTarget(target: unknown): asserts target is FsTarget {
  const t = target as Partial<FsTarget> | null;
  if (
    typeof t !== 'object' ||
    t === null ||
    typeof t.targetKey !== 'string' ||
    t.targetKey.length === 0 ||
    typeof t.displayPath !== 'string'
  ) {
    throw new FsError('FS_INVALID_ARGUMENT', `expected an FsTarget from resolve(), got ${describeType(target)}`);
  }
}

function checkIntent(intent: unknown, allowCreate: boolean): void {
  if (intent === undefined) return;
  const i = intent as Partial<{ kind: string; version: unknown }> | null;
  if (typeof i === 'object' && i !== null) {
    if (i.kind === 'createIfAbsent' && allowCreate) return;
    if (i.kind === 'replaceIfVersion' && typeof i.version === 'string' && i.version.length > 0) return;
  }
  throw new FsError('FS_INVALID_ARGUMENT', `invalid write intent ${safeJson(intent)}`);
}

function checkEdit(edit: unknown): Required<FsEditRequest> {
  const e = edit as Partial<FsEditRequest> | null;
  if (typeof e !== 'object' || e === null) throw new FsError('FS_INVALID_ARGUMENT', 'edit must be an object');
  if (typeof e.oldString !== 'string' || e.oldString.length === 0) {
    throw new FsError('FS_INVALID_ARGUMENT', 'old_string must be a non-empty string');
  }
  assertWritableText(e.oldString, 'old_string');
  assertWritableText(e.newString, 'new_string');
  if (crlfToLf(e.oldString) === crlfToLf(e.newString)) {
    throw new FsError('FS_INVALID_ARGUMENT', 'old_string and new_string are identical; there is nothing to change');
  }
  if (e.replaceAll !== undefined && typeof e.replaceAll !== 'boolean') {
    throw new FsError('FS_INVALID_ARGUMENT', 'replace_all must be a boolean');
  }
  return { oldString: e.oldString, newString: e.newString, replaceAll: e.replaceAll ?? false };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
