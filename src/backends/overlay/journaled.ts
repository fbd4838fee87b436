import { isFsError, type FileSystem, type FsError, type FsJournal, type FsProvider } from '../../seam/index.js';

// What publishes many changes to the lower (a commit) runs inside a journal when the lower keeps
// one (J1: the local provider): killed part-way, the next open of the sandbox finishes it.

/** The lower's journal, when its provider keeps one. */
export function journalOf(lower: FileSystem): FsJournal | undefined {
  const provider = (lower as { readonly provider?: FsProvider }).provider;
  return typeof provider?.journal?.begin === 'function' ? provider.journal : undefined;
}

export interface JournaledOptions {
  /** What runs (`commit`, …): the opener that finds it unfinished runs the finisher of that kind. */
  readonly kind: string;
  /** The sandbox that can finish it (its state directory's real path); none: it is undone instead. */
  readonly owner: string | undefined;
  /** JSON for the finisher (e.g. a commit's selection). */
  readonly payload?: unknown;
  /** Lower target keys of every file or directory `publish` may create, replace or remove. */
  readonly keys: Iterable<string>;
  readonly signal?: AbortSignal;
  /**
   * Called instead of `publish` when the journal cannot be begun (a root this process may not
   * write, a read-only filesystem): nothing was written. Without it, that error is thrown.
   */
  readonly refused?: (err: FsError) => unknown;
}

/**
 * Runs `publish` (which writes to the lower and makes its writes durable) inside a journal of
 * the lower, recorded before it starts. A `publish` that returns or throws ends the journal: a
 * reported failure is not undone, only a process killed part-way is (docs/overlay.md).
 */
export async function journaled<T>(lower: FileSystem, options: JournaledOptions, publish: () => Promise<T>): Promise<T> {
  const journal = journalOf(lower);
  const keys = [...new Set(options.keys)];
  if (journal === undefined || keys.length === 0) return publish();
  let handle;
  try {
    handle = await journal.begin({
      kind: options.kind,
      ...(options.owner === undefined ? {} : { owner: options.owner }),
      ...(options.payload === undefined ? {} : { payload: options.payload }),
      keys,
      signal: options.signal,
    });
  } catch (err) {
    if (options.refused === undefined || !isFsError(err) || err.code === 'FS_ABORTED') throw err;
    return options.refused(err) as T;
  }
  let result: T;
  try {
    result = await publish();
  } catch (err) {
    await handle.end().catch(() => undefined);
    throw err;
  }
  await handle.end();
  return result;
}
