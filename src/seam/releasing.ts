/**
 * An iterator over `gen` that calls `release` when it is let go before its first `next()`: a
 * generator's own `finally` runs only once it has started, so what it holds would leak.
 */
export function releasing<T>(gen: AsyncGenerator<T>, release: () => Promise<unknown> | unknown): AsyncIterableIterator<T> {
  let started = false;
  const iterator: AsyncIterableIterator<T> = {
    next: () => {
      started = true;
      return gen.next();
    },
    return: async (value?: unknown) => {
      if (!started) await Promise.resolve().then(release).catch(() => undefined);
      return gen.return(value as undefined);
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
