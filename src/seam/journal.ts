import type { FsOpOptions } from './model.js';

// J1: an operation that writes many files of a store (a commit) records, before its first write,
// what each path it may touch held; killed part-way, the next opener finishes it or undoes it.

/** What an operation tells the journal before its first write. */
export interface FsJournalBegin extends FsOpOptions {
  /** What the operation is (`commit`, …): the opener that finds it unfinished decides by it. */
  readonly kind: string;
  /** Who can finish it (a sandbox's state directory); absent when nobody can: it is then undone. */
  readonly owner?: string;
  /** JSON the owner needs to finish it (a commit's selection). */
  readonly payload?: unknown;
  /** Target keys of every file or directory it may create, replace or remove. */
  readonly keys: readonly string[];
}

export interface FsJournalHandle {
  /** The operation is over and its writes are durable: the record goes. */
  end(): Promise<void>;
}

/** An operation found unfinished (its process was killed), claimed by this process. */
export interface FsPendingJournal {
  readonly kind: string | undefined;
  readonly owner: string | undefined;
  readonly payload: unknown;
  /** The process that started it, when known. */
  readonly pid: number | undefined;
  /** Puts every recorded path back as it was, removes the operation's temp files and the record; the keys restored. */
  rollBack(): Promise<string[]>;
  /** The operation was finished another way (run again): removes its temp files and the record. */
  discard(): Promise<void>;
  /** Leaves it for another opener (its owner): this process's claim goes. */
  release(): Promise<void>;
}

/** Optional provider capability (J1); the local provider has it. */
export interface FsJournal {
  begin(record: FsJournalBegin): Promise<FsJournalHandle>;
  /** Unfinished operations whose process is gone, each claimed by this process (none twice). */
  pending(options?: FsOpOptions): Promise<FsPendingJournal[]>;
}
