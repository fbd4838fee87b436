import { FsError, isFsError, throwIfAborted } from './errors.js';
import type { KeyedMutex } from './lock.js';
import { safeJson } from './path.js';
import { checkWriteIntent } from './resolve.js';
import { pauseBeforeRetry } from './retry.js';
import type { FsCurrent, FsExpect, FsProvider, FsSwapResult, FsTarget, FsVersion, FsWriteIntent } from './types.js';

export type SwapDone = Extract<FsSwapResult, { ok: true }>;

/** The existing file is over the text limit; the write intent held (the policy answers first). */
export class LargeFile extends FsError {}

/** New bytes (or null: remove), or a function of the current file that gives them. */
export type Change = Uint8Array | null | ((current: FsCurrent | undefined) => Uint8Array);

export type Mutate = (
  target: FsTarget,
  what: string,
  signal: AbortSignal | undefined,
  intent: FsWriteIntent | undefined,
  change: Change,
  durability?: 'deferred',
) => Promise<SwapDone>;

/**
 * The one write protocol, over the provider's compare-and-swap. Under the target's lock: read
 * the file when the new bytes depend on it (`change` is a function), check the intent, swap. A
 * guarded call whose swap finds another state fails at once (G1, G2). An unguarded
 * read-modify-write that lost a race to a writer outside this lock reads again and retries (G6),
 * after a short random pause, for as long as it loses: only the caller's signal stops it. A
 * provider with `modify` does the read and the write under a lock of its own, so it does not lose.
 */
export function createMutate(provider: FsProvider, locks: KeyedMutex, maxTextBytes: number): Mutate {
  /** The current file for a read-modify-write, or undefined when there is none. */
  async function readCurrent(target: FsTarget, what: string, signal: AbortSignal | undefined): Promise<FsCurrent | undefined> {
    try {
      return await provider.read(target, { maxBytes: maxTextBytes, signal });
    } catch (err) {
      if (isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY')) return undefined;
      throw err;
    }
  }

  /**
   * A file over the limit: the intent is checked first (an unobserved overwrite is the policy's
   * FS_NOT_OBSERVED whatever the size), then LargeFile, which a caller may take the streaming way.
   */
  async function large(target: FsTarget, what: string, signal: AbortSignal | undefined, intent: FsWriteIntent | undefined, cause: unknown): Promise<never> {
    if (intent?.kind === 'createIfAbsent') checkWriteIntent(intent, { version: 'present' as FsVersion }, what);
    // A store that streams checks the version on the way (editLarge, writeTextLarge), in the pass it reads the file in anyway.
    const streams = provider.openRead !== undefined && provider.swapFrom !== undefined;
    if (intent?.kind === 'replaceIfVersion' && !streams) {
      const info = await provider.stat(target, { signal });
      checkWriteIntent(intent, info?.type === 'file' && info.version !== undefined ? { version: info.version } : undefined, what);
    }
    throw new LargeFile('FS_TOO_LARGE', `${what}: the existing file is larger than the ${maxTextBytes}-byte text limit`, { cause });
  }

  /** One read-modify-write: under the provider's lock when it has one, else a read and a swap. */
  async function readModifyWrite(
    target: FsTarget,
    what: string,
    signal: AbortSignal | undefined,
    intent: FsWriteIntent | undefined,
    change: (current: FsCurrent | undefined) => Uint8Array,
    durability: 'deferred' | undefined,
  ): Promise<FsSwapResult> {
    const checked = (current: FsCurrent | undefined) => {
      checkWriteIntent(intent, current, what);
      return change(current);
    };
    let current: FsCurrent | undefined;
    try {
      if (provider.modify) return await provider.modify(target, { maxBytes: maxTextBytes, signal }, checked);
      current = await readCurrent(target, what, signal);
    } catch (err) {
      if (isFsError(err, 'FS_TOO_LARGE') && !(err instanceof LargeFile)) return large(target, what, signal, intent, err);
      throw err;
    }
    const bytes = checked(current);
    throwIfAborted(signal, what);
    const expect: FsExpect = current === undefined ? { kind: 'absent' } : { kind: 'present', version: current.version };
    return provider.swap(target, { expect, bytes, signal, ...(durability ? { durability } : {}) });
  }

  return (target, what, signal, intent, change, durability) =>
    locks.run(target.targetKey, async () => {
      for (let lost = 1; ; lost++) {
        throwIfAborted(signal, what);
        const result =
          typeof change === 'function'
            ? await readModifyWrite(target, what, signal, intent, change, durability)
            : await provider.swap(target, { expect: expectOf(intent), bytes: change, signal, ...(durability ? { durability } : {}) });
        if (result?.ok === true) return result;
        if (result?.ok !== false) throw new FsError('FS_IO_ERROR', `${what}: the provider's swap returned ${safeJson(result)}`);
        const now = result.current;
        checkWriteIntent(intent, now.kind === 'present' ? now : undefined, what);
        if (typeof change !== 'function') {
          throw new FsError('FS_IO_ERROR', `${what}: the provider refused a swap whose expectation held (${safeJson(now)})`);
        }
        await pauseBeforeRetry(lost, signal, what);
      }
    });
}

function expectOf(intent: FsWriteIntent | undefined): FsExpect {
  if (intent === undefined) return { kind: 'any' };
  return intent.kind === 'createIfAbsent' ? { kind: 'absent' } : { kind: 'present', version: intent.version };
}
