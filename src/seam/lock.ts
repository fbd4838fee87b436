/**
 * A per-key FIFO mutex for providers' per-target critical sections. Entries are dropped when idle,
 * so the map does not grow with the number of files ever touched.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T> | T): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.#tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  /** Number of keys currently held or waited on (for tests: a lock left held is a bug). */
  get size(): number {
    return this.#tails.size;
  }
}
