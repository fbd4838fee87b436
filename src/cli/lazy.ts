// Backends a command may not need, loaded on first use: the CLI starts without them.
import type { FeedbackStore, ReviewFeedback } from '../review/types.js';

/** `load`, called once, on the first call of the result. */
export function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}

/** A feedback store made on first use (its backend imported then). */
export function lazyFeedback(make: () => Promise<FeedbackStore>): FeedbackStore {
  const store = once(make);
  return {
    add: async (items: readonly ReviewFeedback[]) => (await store()).add(items),
    pending: async () => (await store()).pending(),
    take: async () => (await store()).take(),
  };
}
