// writeBytesFrom (V7): exact bytes published from a stream, so a file of any size is written in
// memory bounded by a chunk where the provider can take a stream (`swapFrom`).
import { FsError, throwIfAborted } from './errors.js';
import { call } from './fs-call.js';
import { checkIntent, durabilityOf, writtenVersion } from './fs-checks.js';
import type { FsContext } from './fs-context.js';
import { describeType } from './path.js';
import { checkWriteIntent } from './resolve.js';
import type { FileSystem, FsExpect, FsSwapResult, FsTarget, FsWriteIntent, FsWriteOptions, FsWriteOutcome } from './types.js';

export function createWriteBytesFrom(ctx: FsContext): NonNullable<FileSystem['writeBytesFrom']> {
  const { provider, locks, maxTextBytes } = ctx;
  return async function writeBytesFrom(target: FsTarget, source: AsyncIterable<Uint8Array>, intent?: FsWriteIntent, opts?: FsWriteOptions): Promise<FsWriteOutcome> {
    ctx.checkTarget(target);
    if (typeof (source as Partial<AsyncIterable<Uint8Array>> | null)?.[Symbol.asyncIterator] !== 'function') {
      throw new FsError('FS_INVALID_ARGUMENT', `source must be an async iterable of Uint8Array, got ${describeType(source)}`);
    }
    checkIntent(intent, true);
    const what = `cannot write "${target.displayPath}"`;
    const durability = durabilityOf(opts);
    const signal = opts?.signal;
    const count = { size: 0 };
    const checked = counted(source, count, signal, what);
    const done = await call(what, signal, () =>
      locks.run(target.targetKey, async () => {
        const expect = expectOf(intent);
        const flags = { expect, ...(signal ? { signal } : {}), ...(durability ? { durability } : {}) };
        const result: FsSwapResult = provider.swapFrom
          ? await provider.swapFrom(target, { ...flags, source: checked })
          : await provider.swap(target, { ...flags, bytes: await gather(checked, maxTextBytes, what) });
        if (result?.ok === true) return result;
        if (result?.ok !== false) throw new FsError('FS_IO_ERROR', `${what}: the provider's swap returned an invalid result`);
        const now = result.current;
        checkWriteIntent(intent, now.kind === 'present' ? now : undefined, what);
        throw new FsError('FS_IO_ERROR', `${what}: the provider refused a swap whose expectation held`);
      }),
    );
    return { operation: done.existed ? 'update' : 'create', version: writtenVersion(done, what), size: count.size };
  };
}

function expectOf(intent: FsWriteIntent | undefined): FsExpect {
  if (intent === undefined) return { kind: 'any' };
  return intent.kind === 'createIfAbsent' ? { kind: 'absent' } : { kind: 'present', version: intent.version };
}

/** The caller's chunks, each checked to be bytes and counted, the signal checked before each. */
async function* counted(source: AsyncIterable<Uint8Array>, count: { size: number }, signal: AbortSignal | undefined, what: string): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    throwIfAborted(signal, what);
    if (!(chunk instanceof Uint8Array)) throw new FsError('FS_INVALID_ARGUMENT', `${what}: the source gave ${describeType(chunk)}, not a Uint8Array`);
    count.size += chunk.byteLength;
    yield chunk;
  }
}

/** Without `swapFrom`, the stream is gathered for one `swap`: bounded by the text limit, as every read of such a store. */
async function gather(source: AsyncIterable<Uint8Array>, limit: number, what: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of source) {
    size += chunk.byteLength;
    if (size > limit) {
      throw new FsError('FS_TOO_LARGE', `${what}: this store cannot write a stream (no swapFrom), and the content exceeds the ${limit}-byte text limit it is gathered into; raise maxTextBytes`);
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}
