import type { FsVersion } from './model.js';

/**
 * What a change event says happened at `path` (see docs/feed.md):
 * - `write`: a file was created or its content replaced; `version` is the new content's.
 * - `remove`: a file or link was removed.
 * - `mkdir` / `rmdir`: a directory was made / removed (with `recursive`, everything below went too).
 * - `rename`: the entry at `from` moved to `path` (with a directory, everything below it);
 *   `version` is the moved file's, when it is a file and the store knows it.
 * - `link`: a symbolic link was made at `path`.
 * - `mode`: a file's executable bit changed (its bytes and version did not).
 * - `overflow`: events were lost (a slow consumer, a lost connection, or a change the store
 *   cannot describe path by path, such as a rewind): anything may have changed since the last
 *   event; re-read what you depend on. Its `path` is `/`.
 */
export type FsChangeKind = 'write' | 'remove' | 'mkdir' | 'rmdir' | 'rename' | 'link' | 'mode' | 'overflow';

/** One change of a filesystem, as `FileSystem.watch` delivers it. */
export interface FsChangeEvent {
  readonly kind: FsChangeKind;
  /** The changed entry's canonical absolute path (its target key); for `rename`, where it went. */
  readonly path: string;
  /** For `rename`: where the entry was. */
  readonly from?: string;
  /** For `write` (and a file's `rename`, when known): the version of the content now at `path`. */
  readonly version?: FsVersion;
  /** Who made the change, when the store knows (an overlay's `label({ owner })`). */
  readonly owner?: string;
}

/** Options of `FileSystem.watch`. */
export interface FsWatchOptions {
  /**
   * Only changes at or below these paths (made canonical against the cwd); a rename is delivered
   * when either of its sides is. Default: every change. `overflow` is always delivered.
   */
  readonly paths?: readonly string[];
  /** Ends the iteration, as `return()` does. */
  readonly signal?: AbortSignal;
  /**
   * How many undelivered events are held for a slow consumer (default 1,000). When that many wait,
   * later events are dropped and one `overflow` event is delivered after those held.
   */
  readonly bufferSize?: number;
}

/**
 * A live subscription: iterate it with `for await`. Ends when `return()` is called (a `break`
 * calls it), when the signal aborts, or with an FsError from `next()` when the subscription fails.
 */
export interface FsWatch extends AsyncIterableIterator<FsChangeEvent> {
  /**
   * Resolves once the subscription is live: every change made after that is delivered (unless
   * dropped as `overflow` says); rejects with the FsError that ended it.
   */
  readonly ready: Promise<void>;
  return(): Promise<IteratorResult<FsChangeEvent, undefined>>;
}

/** What a provider reports: as an event, with the path being the target key the store uses. */
export type FsProviderChange = FsChangeEvent;

/** Receives a provider's changes, synchronously, in the order the store made them. */
export type FsChangeListener = (change: FsProviderChange) => void;
