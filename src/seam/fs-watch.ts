import { FsError, toFsError } from './errors.js';
import type { FsChangeEvent, FsProviderChange, FsWatch, FsWatchOptions } from './feed-types.js';
import type { FsContext } from './fs-context.js';
import { canonicalPath, describeType, isWithin } from './path.js';

export const DEFAULT_WATCH_BUFFER = 1000;

const OVERFLOW: FsChangeEvent = Object.freeze({ kind: 'overflow', path: '/' });

/**
 * W1: `fs.watch`, on a provider that reports changes. The seam owns what a subscriber sees: paths
 * within the root and the filter, nothing reserved, and a bounded buffer per subscriber.
 */
export function createWatch(ctx: FsContext): ((options?: FsWatchOptions) => FsWatch) | undefined {
  const { provider } = ctx;
  if (typeof provider.watch !== 'function') return undefined;
  return (options = {}) => {
    const { prefixes, signal, bufferSize } = checkOptions(ctx, options);
    const visible = (change: FsProviderChange): FsChangeEvent | undefined => {
      if (change.kind === 'overflow') return OVERFLOW;
      const event = shaped(change);
      if (event === undefined) return undefined;
      const sides = event.from === undefined ? [event.path] : [event.path, event.from];
      if (!sides.some((p) => inView(ctx, p))) return undefined;
      if (prefixes !== undefined && !sides.some((p) => prefixes.some((prefix) => isWithin(prefix, p)))) return undefined;
      return event;
    };
    const queue = new FeedQueue(bufferSize);
    let stop: (() => void) | undefined;
    const close = () => {
      queue.end();
      stop?.();
      stop = undefined;
      signal?.removeEventListener('abort', close);
    };
    const ready = (async () => {
      if (signal?.aborted) return close();
      signal?.addEventListener('abort', close, { once: true });
      try {
        const unsubscribe = await provider.watch!((change) => {
          const event = visible(change);
          if (event !== undefined) queue.push(event);
        }, signal === undefined ? {} : { signal });
        if (queue.ended) unsubscribe();
        else stop = unsubscribe;
      } catch (err) {
        const error = toFsError(err, 'cannot watch for changes');
        queue.fail(error);
        close();
        throw error;
      }
    })();
    ready.catch(() => {}); // the error is also next()'s
    const watch: FsWatch = {
      ready,
      next: () => queue.next(),
      return: async () => {
        close();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return watch;
      },
    };
    return watch;
  };
}

function checkOptions(ctx: FsContext, options: FsWatchOptions) {
  if (typeof options !== 'object' || options === null) throw new FsError('FS_INVALID_ARGUMENT', `watch options must be an object, got ${describeType(options)}`);
  const { paths, signal, bufferSize = DEFAULT_WATCH_BUFFER } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new FsError('FS_INVALID_ARGUMENT', 'watch: signal must be an AbortSignal');
  if (!Number.isSafeInteger(bufferSize) || bufferSize < 1) throw new FsError('FS_INVALID_ARGUMENT', 'watch: bufferSize must be a positive integer');
  if (paths !== undefined && (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string'))) {
    throw new FsError('FS_INVALID_ARGUMENT', 'watch: paths must be an array of strings');
  }
  const prefixes = paths?.map((p) => canonicalPath(p, ctx.cwd));
  return { prefixes, signal, bufferSize };
}

/** A provider's change with only the documented fields, or undefined when it is malformed. */
function shaped(change: FsProviderChange): FsChangeEvent | undefined {
  if (typeof change !== 'object' || change === null || typeof change.path !== 'string' || !change.path.startsWith('/')) return undefined;
  const { kind, from, version, owner } = change;
  if (kind === 'rename' && typeof from !== 'string') return undefined;
  return {
    kind,
    path: canonicalPath(change.path, '/'),
    ...(kind === 'rename' ? { from: canonicalPath(from!, '/') } : {}),
    ...(typeof version === 'string' && version !== '' ? { version } : {}),
    ...(typeof owner === 'string' && owner !== '' ? { owner } : {}),
  };
}

/** Within the root, and naming nothing the store keeps for itself. */
function inView(ctx: FsContext, path: string): boolean {
  if (ctx.root !== undefined && !isWithin(ctx.root, path)) return false;
  if (ctx.reserved === undefined) return true;
  try {
    ctx.reserved(path, path);
    return true;
  } catch {
    return false;
  }
}

/**
 * At most `size` undelivered events. When full, later events are dropped until the consumer has
 * taken what is held, then one `overflow` tells it so; from then on events are held again.
 */
export class FeedQueue {
  readonly #held: FsChangeEvent[] = [];
  #overflowed = false;
  #ended = false;
  #error: FsError | undefined;
  #waiter: ((result: IteratorResult<FsChangeEvent, undefined>) => void) | undefined;
  #rejecter: ((error: FsError) => void) | undefined;

  constructor(readonly size: number) {}

  get ended(): boolean {
    return this.#ended;
  }

  push(event: FsChangeEvent): void {
    if (this.#ended) return;
    if (this.#waiter !== undefined) return this.#wake({ done: false, value: event });
    if (this.#overflowed) return;
    if (this.#held.length < this.size) this.#held.push(event);
    else this.#overflowed = true;
  }

  next(): Promise<IteratorResult<FsChangeEvent, undefined>> {
    const event = this.#held.shift();
    if (event !== undefined) return Promise.resolve({ done: false, value: event });
    if (this.#overflowed) {
      this.#overflowed = false;
      return Promise.resolve({ done: false, value: OVERFLOW });
    }
    if (this.#error !== undefined) return Promise.reject(this.#error);
    if (this.#ended) return Promise.resolve({ done: true, value: undefined });
    if (this.#waiter !== undefined) return Promise.reject(new FsError('FS_INVALID_ARGUMENT', 'watch: next() called again before the previous call settled'));
    return new Promise((resolve, reject) => {
      this.#waiter = resolve;
      this.#rejecter = reject;
    });
  }

  /** Ends the iteration: what is held is dropped, a waiting next() is done. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#held.length = 0;
    this.#overflowed = false;
    this.#wake({ done: true, value: undefined });
  }

  fail(error: FsError): void {
    this.#error = error;
    const reject = this.#rejecter;
    this.#waiter = undefined;
    this.#rejecter = undefined;
    reject?.(error);
  }

  #wake(result: IteratorResult<FsChangeEvent, undefined>): void {
    const wake = this.#waiter;
    this.#waiter = undefined;
    this.#rejecter = undefined;
    wake?.(result);
  }
}
