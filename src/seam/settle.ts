/**
 * Concurrent work that never outlives the call that started it. Promise.all rejects on the first
 * failure while the other operations are still running: a descriptor they hold is then closed,
 * and a write they make lands, after the caller was told the call had finished. These wait for
 * everything started to settle, then report the first failure.
 */

/** Like Promise.all, but settles only once every promise has; then throws the first failure. */
export async function settleAll<T>(promises: Iterable<Promise<T>>): Promise<T[]> {
  let failed = false;
  let first: unknown;
  const results = await Promise.all(
    Array.from(promises, (p) =>
      p.catch((err: unknown) => {
        if (!failed) {
          failed = true;
          first = err;
        }
        return undefined as T;
      }),
    ),
  );
  if (failed) throw first;
  return results;
}

/**
 * Runs `fn` over `items`, at most `limit` at once, in order of the items. After a failure no
 * further item starts; those already started run to their end, then the first failure is thrown.
 */
export async function forEachBounded<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  let first: unknown;
  const worker = async () => {
    while (!failed && next < items.length) {
      const k = next++;
      try {
        await fn(items[k]!, k);
      } catch (err) {
        if (!failed) {
          failed = true;
          first = err;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  if (failed) throw first;
}
