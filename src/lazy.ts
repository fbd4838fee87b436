/**
 * A module (or anything else) loaded on the first call and shared by every later one. Commands
 * that never reach a feature do not pay for loading it; one promise keeps callers in call order.
 */
export function lazily<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}
