// Backends a command may not need, loaded on first use: the CLI starts without them.
import { lazily } from '../lazy.js';
import type { FeedbackStore, ReviewFeedback } from '../review/types.js';

/** A feedback store made on first use (its backend imported then). */
export function lazyFeedback(make: () => Promise<FeedbackStore>): FeedbackStore {
  const store = lazily(make);
  return {
    add: async (items: readonly ReviewFeedback[]) => (await store()).add(items),
    pending: async () => (await store()).pending(),
    take: async () => (await store()).take(),
  };
}
