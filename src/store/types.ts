import type { FsVersion } from '../seam/model.js';

/**
 * What a store keeps at a key. Keys are canonical absolute paths (`/`, `/a`, `/a/b.txt`); the
 * root directory `/` exists whether or not the store holds an entry for it. Directories are
 * stored explicitly, so an empty directory exists.
 */
export type StoreEntry =
  | {
      readonly kind: 'file';
      readonly bytes: Uint8Array;
      /** Minted by the store tier from the bytes; the store keeps it and gives it back unchanged. */
      readonly version: FsVersion;
      readonly executable?: boolean;
      readonly mtimeMs?: number;
    }
  | { readonly kind: 'directory'; readonly mtimeMs?: number }
  | { readonly kind: 'link'; readonly text: string };

/** An entry without a file's bytes: what listings carry, and what `head` may answer. */
export type StoreHead =
  | (Omit<Extract<StoreEntry, { kind: 'file' }>, 'bytes'> & { readonly size: number })
  | Exclude<StoreEntry, { kind: 'file' }>;

/** A child of a listed directory: its name (one segment) and what is there. */
export type StoreChild = { readonly name: string } & (StoreEntry | StoreHead);

/** One page of a listing. `next`, when set, is passed back to `list` for the following page. */
export interface StoreListPage {
  readonly children: readonly StoreChild[];
  readonly next?: string;
}

/** The operations of one transaction. Every key is a canonical absolute path. */
export interface StoreTx {
  get(key: string): Promise<StoreEntry | undefined>;
  /** Optional: `get` without the bytes, for stores where reading them costs (sizes, versions, listings). */
  head?(key: string): Promise<StoreHead | undefined>;
  /** Stores `entry` at `key`, replacing what was there. */
  put(key: string, entry: StoreEntry): Promise<void>;
  delete(key: string): Promise<void>;
  /** The direct children of the directory `dir`, in any order, a page at a time. */
  list(dir: string, next?: string): Promise<StoreListPage>;
}

/**
 * A transactional key-value store: all the store tier needs to make a full filesystem.
 * `transaction` runs `body` so that no other transaction, in this process or another, sees its
 * changes before it resolves or interleaves with them (serializable); when `body` throws, none of
 * its changes remain. The tier never nests transactions.
 */
export interface FsStore {
  transaction<T>(body: (tx: StoreTx) => Promise<T>, options?: { readonly readOnly?: boolean }): Promise<T>;
  /** Release connections and files (optional). */
  close?(): Promise<void>;
}
