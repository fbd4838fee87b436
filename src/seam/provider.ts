import type { FsJournal } from './journal.js';
import type { FsChangeListener } from './feed-types.js';
import type {
  FsDirEntry,
  FsEditOutcome,
  FsEditRequest,
  FsInfo,
  FsListOptions,
  FsObservation,
  FsOpOptions,
  FsTarget,
  FsTargetKey,
  FsVersion,
  FsWalkEntry,
  FsWalkOptions,
} from './model.js';

// ---------------------------------------------------------------------------------------------
// Provider SPI v2: what a backend implements. Storage only: the seam owns locking, intents,
// retries and every text rule.
// ---------------------------------------------------------------------------------------------

export interface FsProviderReadOptions extends FsOpOptions {
  readonly maxBytes: number;
  /** A hint: the seam will not use the version, so the provider may return any (skip the digest). */
  readonly unversioned?: boolean;
  /**
   * A hint: the seam only decodes the bytes (it never changes them or hands them out), so a
   * provider whose writes put new storage in place of the old may return its storage itself
   * rather than a copy.
   */
  readonly shared?: boolean;
}

/** `openRead`'s options. */
export interface FsProviderOpenReadOptions extends FsProviderReadOptions {
  readonly start?: number;
  /** A chunk may be overwritten once the next is asked for (`streamBytes`' option). */
  readonly reuse?: boolean;
  /**
   * A hint: the caller reads from 0 to the end and needs the version only then, so a provider
   * that would hash the file first may instead leave `version` out (when it does not know it
   * already) and hash the bytes as they stream, giving it by `versionRead`.
   */
  readonly versionAtEnd?: boolean;
}

export interface FsProviderStatOptions extends FsOpOptions {
  /** A hint: the caller wants no version, so the provider may leave a file's out (skip the digest). */
  readonly unversioned?: boolean;
}

/**
 * What `stat` gives the seam: as `FsInfo`, but the version is a file's alone. The seam mints the
 * version of a directory (from its entries' names) and of anything else, so a provider leaves it out.
 */
export type FsProviderInfo = Omit<FsInfo, 'version'> & { readonly version?: FsVersion };

/** A file's bytes and the version of exactly those bytes. */
export interface FsCurrent {
  readonly bytes: Uint8Array;
  readonly version: FsVersion;
}

/** What a swap requires the target to hold: a file at a version, nothing, or anything. */
export type FsExpect = FsObservation | { readonly kind: 'any' };

export interface FsSwapRequest extends FsOpOptions {
  readonly expect: FsExpect;
  /** The new content, or null to remove the file. */
  readonly bytes: Uint8Array | null;
  /** See FsWriteOptions: the directory entry may stay unflushed until `flush`. */
  readonly durability?: 'immediate' | 'deferred';
}

export type FsSwapResult =
  | {
      readonly ok: true;
      /** Whether a file was there before: false means the swap created it (or removed nothing). */
      readonly existed: boolean;
      /** The version of the bytes now published; undefined after a removal. */
      readonly version?: FsVersion;
    }
  /** `expect` did not hold: nothing changed, and this is what the target holds now. */
  | { readonly ok: false; readonly current: FsObservation };

/**
 * A file's content as a stream (`openRead`): the whole file's size and version, and its bytes
 * from the requested start to its end, in chunks of any size the provider chooses.
 */
export interface FsProviderReadStream {
  /** Size in bytes of the whole file (not of the part streamed). */
  readonly size: number;
  /**
   * The version of the whole file, as `read` gives it for the same bytes (V1). Present unless the
   * read was `unversioned`. The chunks are the bytes of that version: a provider that cannot hold
   * the file still while it streams (a local file another process rewrites) hashes what it
   * streams, and fails the read with FS_CONFLICT when the bytes changed under it.
   */
  readonly version?: FsVersion;
  /**
   * Asked with `versionAtEnd` and `version` left out: the version of the bytes streamed, once the
   * chunks have been read to their end (undefined before, and after a read that stopped early).
   */
  readonly versionRead?: () => FsVersion | undefined;
  /**
   * The bytes from `start` to the end of the file. The consumer may stop early (break out of the
   * loop); the provider then releases what it holds (a file descriptor, a cursor). Iterated once.
   */
  readonly chunks: AsyncIterable<Uint8Array>;
}

/** `swapFrom`'s request: as `swap`'s, with the new content as a stream (never a removal). */
export type FsSwapFromRequest = Omit<FsSwapRequest, 'bytes'> & {
  /** The new content, read once, in order; the provider never needs it whole in memory. */
  readonly source: AsyncIterable<Uint8Array>;
  /**
   * A hint: the source is made from the file itself, read with `versionAtEnd` (it checks its own
   * version at its end), so a provider that does not know the file's version yet may compare
   * `expect` at publication only, instead of hashing the file before reading the source.
   */
  readonly expectAtEnd?: boolean;
};

/** What a search asks a provider to narrow (`searchCandidates`). */
export interface FsSearchQuery {
  /** Bytes every file the search can match contains (the UTF-8 of a literal its pattern requires); never empty. */
  readonly contains: Uint8Array;
  /**
   * Files the search reports whatever they hold, so they are candidates too: those larger than
   * this many bytes (skipped as too large), and those that may not be text (T1: any holding a NUL
   * byte or invalid UTF-8, skipped as binary; a provider may answer with any wider set, e.g. every
   * file with a byte outside ASCII).
   */
  readonly alsoLargerThan: number;
  /**
   * Optional: the provider may also return the whole content of candidates of at most
   * `maxFileBytes` bytes each, `maxTotalBytes` in all (`FsSearchCandidates.contents`), so the
   * search need not read them one by one. Any subset will do, none included.
   */
  readonly contents?: { readonly maxFileBytes: number; readonly maxTotalBytes: number };
}

/**
 * `searchCandidates`' answer: the candidates' keys, and, when the query asked for `contents`, the
 * whole content of some of them, as a read at the time of the answer would give it.
 */
export type FsSearchCandidates = ReadonlySet<FsTargetKey> & { readonly contents?: ReadonlyMap<FsTargetKey, Uint8Array> };

/** What a search asks of `searchReads`. */
export interface FsSearchReadQuery {
  /** Files larger than this are left to the usual read (answered undefined). */
  readonly maxBytes: number;
  /**
   * The answers' bytes together: at most this many. A file that would go over is answered
   * undefined, and so may every file after it, so that a search holds a bounded amount at once.
   */
  readonly maxTotalBytes: number;
  /**
   * Optional: bytes every file the search can match contains (as FsSearchQuery.contains). A file
   * that is text (T1) and does not contain them may be answered null: the search need not read it.
   */
  readonly contains?: Uint8Array;
}

export interface FsModifyRequest extends FsOpOptions {
  /** As for `read`: a larger existing file is FS_TOO_LARGE, checked before its content is read. */
  readonly maxBytes: number;
}

export interface FsProviderRename extends FsOpOptions {
  readonly expect?: FsVersion;
  readonly replace: boolean | FsVersion;
}

/** One swap of a batch: as `swap`'s request, on its own target. */
export interface FsBatchSwap {
  readonly target: FsTarget;
  readonly expect: FsObservation;
  /** The new content, or null to remove the file. */
  readonly bytes: Uint8Array | null;
  /**
   * For a write that moves a file: where it comes from (a removal of the same batch). The new
   * file keeps what the store knows of the old one beyond its bytes, as `rename` keeps it: its
   * executable bit (X1) at least. Absent: the replaced file's bit stays, as with `swap`.
   */
  readonly from?: FsTarget;
}

export type FsBatchResult =
  | { readonly ok: true; readonly versions: readonly (FsVersion | undefined)[] }
  /** The swap at `index` found its expectation broken: nothing changed, and this is what it found. */
  | { readonly ok: false; readonly index: number; readonly current: FsObservation };

/** What a store counts against a quota (`maxBytes`, `maxFiles`): bytes of files, and files (links count as files). */
export interface FsUsage {
  readonly bytes: number;
  readonly files: number;
}

export interface FsProvider {
  /** Absolute directory the provider is confined to; the seam rejects paths lexically outside it. */
  readonly root?: string;
  /** Default cwd for relative paths (default: `root`, else `/`). */
  readonly cwd?: string;
  /**
   * Names the provider keeps for files of its own (e.g. temp files it may later remove). The seam
   * refuses, with FS_INVALID_ARGUMENT, any path with a segment below `root` that matches, and any
   * target whose key (then read as an absolute path) has one; the provider leaves such entries out
   * of listings, walks and directory versions.
   */
  readonly reservedNames?: RegExp;
  /**
   * Map a canonical absolute POSIX path (already validated by the seam: absolute, normalised,
   * no NUL) to a target. Aliases must give one targetKey. Throws FS_OUTSIDE_ROOT when the path
   * resolves (e.g. through a symlink) outside the provider's root.
   */
  resolve(path: string, options: FsOpOptions): Promise<FsTarget>;
  /** Optional; the default treats targetKeys as absolute POSIX paths. */
  contains?(parent: FsTarget, child: FsTarget): boolean;
  /**
   * Optional: the key of the entry `name` directly inside the directory `parent`, as a listing
   * gives it when it is no link. The one place a key is derived from another: without it, keys
   * are canonical absolute paths and the child's is the parent's joined with the name.
   */
  childKey?(parent: FsTarget, name: string): FsTargetKey;
  /**
   * Follows links (P4); undefined when absent. A file's version is derived from its bytes (it may
   * be left out when `unversioned` is set); a directory's or anything else's is the seam's to mint.
   */
  stat(target: FsTarget, options: FsProviderStatOptions): Promise<FsProviderInfo | undefined>;
  /**
   * Read a whole regular file. FS_NOT_FOUND when absent, FS_NOT_REGULAR_FILE for anything that
   * is not a regular file (never blocks), FS_TOO_LARGE when it exceeds maxBytes (checked before
   * reading; never truncates).
   */
  read(target: FsTarget, options: FsProviderReadOptions): Promise<FsCurrent>;
  /**
   * Optional (V7): read a regular file as a stream, so a file of any size is read in memory
   * bounded by a chunk. The same answers as `read` (FS_NOT_FOUND when absent, FS_NOT_REGULAR_FILE
   * for anything else, the same confinement checks), but `maxBytes` is ignored: there is no limit.
   * `start` (default 0) is a byte offset where the chunks begin; past the end, no chunks. With
   * `reuse`, a chunk may be overwritten once the next is asked for (`streamBytes`' option). Errors
   * may come from the call (before any byte) or from the iteration. Absent: the seam reads with
   * `read`, bounded by its limit.
   */
  openRead?(target: FsTarget, options: FsProviderOpenReadOptions): Promise<FsProviderReadStream>;
  /**
   * G7: the one mutating file primitive, an atomic compare-and-swap. When `expect` holds, publish
   * `bytes` (creating missing parent directories) or remove the file (`bytes: null`) and return
   * `ok: true`; otherwise change nothing and return what the target holds. Throws
   * FS_NOT_REGULAR_FILE for a directory or special file, FS_NOT_DIRECTORY when a parent is a file.
   */
  swap(target: FsTarget, request: FsSwapRequest): Promise<FsSwapResult>;
  /**
   * Optional (V7): `swap` with the new content as a stream, so a file of any size is written in
   * memory bounded by a chunk. The same compare-and-swap, atomic and durable as `swap`: `expect`
   * is checked before anything is published (a provider may check it before reading the source
   * and again at publication); when it fails, nothing changes and the source may be left unread.
   * An error thrown by the source's iteration aborts the swap, nothing published, and is passed
   * on. Absent: the seam gathers the source into memory, bounded by its limit, and calls `swap`.
   */
  swapFrom?(target: FsTarget, request: FsSwapFromRequest): Promise<FsSwapResult>;
  /**
   * Optional: a read-modify-write under an exclusive lock the store gives (a database row lock),
   * for stores where many writers make optimistic retries slow. Read the file as `read` would
   * (undefined when it is absent), call `change` with it, and publish the bytes it returns as
   * `swap` would, with no other writer able to change the file in between. `change` holds the
   * seam's rules: when it throws, nothing is published and the error is passed on. When another
   * writer got in first all the same (the file was absent, and was created meanwhile), change
   * nothing and return `ok: false` with what is there: the seam calls again after a pause. Without
   * `modify` the seam reads, then swaps with `expect` set to what it read, and retries when the swap loses.
   */
  modify?(target: FsTarget, request: FsModifyRequest, change: (current: FsCurrent | undefined) => Uint8Array): Promise<FsSwapResult>;
  /**
   * Optional (B1): every swap of the batch as one atomic step. Check every expectation; when all
   * hold, publish every change (creating missing parents, as `swap`) and return each published
   * version (undefined for a removal); otherwise change nothing and return the first swap whose
   * expectation failed, with what its target holds. A thrown error also means nothing changed.
   * The targets are distinct, and the seam holds each one's lock. Absent: the seam makes the
   * changes one by one and undoes them on a failure.
   */
  applyBatch?(swaps: readonly FsBatchSwap[], options: FsOpOptions): Promise<FsBatchResult>;
  /**
   * Optional (F1): make durable every `durability: 'deferred'` swap published in these directories
   * (e.g. fsync each directory once). A directory that no longer exists is skipped. Absent: the
   * provider treats deferred swaps as immediate.
   */
  flush?(directories: readonly FsTarget[], options: FsOpOptions): Promise<void>;
  /**
   * Optional (J1): records what an operation over many files (a commit) found before its first
   * write, so that one killed part-way is finished or undone by the next opener (docs/overlay.md).
   */
  readonly journal?: FsJournal;
  /** Direct children, in any order (the seam orders them); links are followed for the type (P4). */
  listDir(target: FsTarget, options: FsListOptions): Promise<FsDirEntry[]>;
  /**
   * Optional: narrow a search in one request to the store. The keys of the regular files
   * stored in `root`'s subtree (keys `contains(root, key)` accepts; links not followed) whose
   * content contains `query.contains`: a file of that subtree whose key is absent is one the
   * search need not read. Only narrows: the seam still walks, orders, applies ignore rules and
   * caps, and matches. Undefined: the provider cannot narrow this query (the search reads every file).
   * With `query.contents`, it may return some candidates' bytes too; the seam keeps only those
   * within the bounds asked and the text limit, and checks them as a read would (T1).
   */
  searchCandidates?(root: FsTarget, query: FsSearchQuery, options: FsOpOptions): Promise<FsSearchCandidates | undefined>;
  /**
   * Optional: a search's reads of many small files at once, for a provider that can read them
   * in parallel (the local provider, on worker threads). For each target, in order: its whole
   * content, as `read` with `unversioned` would give it; null (only with `query.contains`) when
   * the file is text and lacks those bytes; or undefined, when the caller is to read it the usual
   * way (anything not a small regular file, changed while read, or not read for any reason).
   * The bytes answered together stay within `query.maxTotalBytes`: a provider stops reading
   * there rather than hold more (the seam drops what goes over).
   */
  searchReads?(targets: readonly FsTarget[], query: FsSearchReadQuery, options: FsOpOptions): Promise<readonly (Uint8Array | null | undefined)[]>;
  /** Optional bulk listing (D4); the seam walks with listDir when it is absent. */
  walk?(target: FsTarget, options: FsWalkOptions): AsyncIterable<FsWalkEntry>;
  /** D1: create the directory and its missing parents; existing directory: no error. */
  mkdir(target: FsTarget, options: FsOpOptions): Promise<void>;
  /** D2: remove a directory; non-empty without `recursive`: FS_NOT_EMPTY, nothing removed. */
  rmdir(target: FsTarget, options: FsOpOptions & { readonly recursive: boolean }): Promise<void>;
  /** D3: atomic move of a file or directory, with the guards of FsRenameOptions; creates missing parents of `to`. */
  rename(from: FsTarget, to: FsTarget, options: FsProviderRename): Promise<void>;
  /**
   * Optional (X1): set or clear the executable bit of the regular file at `target` (FS_NOT_FOUND
   * when absent, FS_NOT_REGULAR_FILE for anything else). A swap that replaces a file keeps its
   * bit. Absent: the seam answers FS_UNSUPPORTED.
   */
  setExecutable?(target: FsTarget, executable: boolean, options: FsOpOptions): Promise<void>;
  /**
   * Optional (K1): create a link at `target` (a key the seam derived without following the last
   * component) holding `linkText`; FS_ALREADY_EXISTS when any entry is there, FS_NOT_FOUND when
   * the parent is missing. Absent: the seam answers FS_UNSUPPORTED.
   */
  symlink?(target: FsTarget, linkText: string, options: FsOpOptions): Promise<void>;
  /** Optional (K1): the text of the link at `target`; FS_NOT_FOUND when absent, FS_INVALID_ARGUMENT when not a link. */
  readlink?(target: FsTarget, options: FsOpOptions): Promise<string>;
  /** Optional (K2): remove the link at `target`; FS_NOT_FOUND when absent, FS_INVALID_ARGUMENT when not a link. */
  removeLink?(target: FsTarget, options: FsOpOptions): Promise<void>;
  /**
   * Optional (K2): move the link at `from` to `to`, its text unchanged, atomically where the store
   * can. As `FileSystem.renameLink`: the parent of `to` must exist; `replace` replaces a file or
   * link there, never a directory.
   */
  renameLink?(from: FsTarget, to: FsTarget, options: FsOpOptions & { readonly replace: boolean }): Promise<void>;
  /**
   * Optional: report every change of the store, in the order it made them, to `listener` (paths
   * are target keys; the seam canonicalises, filters and buffers). Resolves once reporting is live,
   * to a function that stops it. A provider that loses changes (a lost connection) reports one
   * `overflow`. Absent: `FileSystem.watch` is absent too.
   */
  watch?(listener: FsChangeListener, options: FsOpOptions): Promise<() => void>;
  /**
   * Optional (Q1): what the store counts against a quota, where it is not simply every file the
   * view shows (an overlay counts its upper layer only). Without a target: the whole store, a
   * figure the store keeps (asked before every write under a quota, so it must be cheap). With a
   * target: what is counted at it and below it. Absent: the seam counts the files the view shows,
   * once, and follows its own writes from there.
   */
  usage?(target: FsTarget | undefined, options: FsOpOptions): Promise<FsUsage>;
  /**
   * Optional native edit (e.g. a remote compare-and-edit). When present the seam delegates to it
   * after validating arguments, inside its per-target lock; the conformance suite holds it to the
   * same rules as the seam's. `editBytes` gives the seam's edit of a file's bytes.
   */
  editText?(
    target: FsTarget,
    edit: Required<FsEditRequest>,
    guard: { readonly version: FsVersion } | undefined,
    options: FsOpOptions,
  ): Promise<FsEditOutcome>;
}
