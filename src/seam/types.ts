import type { FsError } from './errors.js';
import type {
  FsChange,
  FsChangesOutcome,
  FsBytesRead,
  FsDirEntry,
  FsEditOutcome,
  FsEditRequest,
  FsInfo,
  FsListOptions,
  FsOpOptions,
  FsStatOptions,
  FsRenameOptions,
  FsResolveOptions,
  FsRmdirOptions,
  FsStreamOptions,
  FsBytesStream,
  FsBytesStreamOptions,
  FsTarget,
  FsTargetKey,
  FsTextRead,
  FsTextStream,
  FsTextWriteOptions,
  FsVersion,
  FsWalkEntry,
  FsWalkNarrowing,
  FsWalkOptions,
  FsWriteIntent,
  FsWriteOptions,
  FsWriteOutcome,
} from './model.js';
import type { FsWatch, FsWatchOptions } from './feed-types.js';
import type { FsSearchCandidates, FsSearchQuery, FsSearchReadQuery } from './provider.js';

export * from './model.js';
export type * from './feed-types.js';
export type * from './provider.js';
export type * from './journal.js';

/** The `ctx.fs` contract. Every method rejects only with FsError. */
export interface FileSystem {
  /** Default directory for relative paths. */
  readonly cwd: string;
  /** The directory this filesystem is confined to, if any. */
  readonly root?: string;
  resolve(path: string, options?: FsResolveOptions): Promise<FsTarget>;
  /** True when `child` is `parent` or lies beneath it. */
  contains(parent: FsTarget, child: FsTarget): boolean;
  /** The key of the entry `name` directly inside `parent` (not through a link): a real subdirectory's key in a listing is this. */
  childKey(parent: FsTarget, name: string): FsTargetKey;
  stat(target: FsTarget, options?: FsStatOptions): Promise<FsInfo | undefined>;
  readText(target: FsTarget, options?: FsOpOptions): Promise<FsTextRead>;
  streamText(target: FsTarget, options?: FsStreamOptions): Promise<FsTextStream>;
  /**
   * With `unversioned`, the caller will not use the version: the provider may skip the digest, and
   * `version` is then `UNVERSIONED` (never a valid guard), as with streamText.
   */
  readBytes(target: FsTarget, options: FsOpOptions & { readonly maxBytes: number; readonly unversioned?: boolean }): Promise<FsBytesRead>;
  /**
   * V7: the bytes of a file of any size as a stream, from a byte offset, with the whole file's
   * size and version; memory bounded by a chunk. Over a provider without `openRead`, bounded by
   * the text limit (FS_TOO_LARGE beyond it). No text check: the caller decodes what it needs.
   */
  streamBytes(target: FsTarget, options?: FsBytesStreamOptions): Promise<FsBytesStream>;
  listDir(target: FsTarget, options?: FsListOptions): Promise<FsDirEntry[]>;
  writeText(
    target: FsTarget,
    content: string,
    intent?: FsWriteIntent,
    options?: FsTextWriteOptions,
  ): Promise<FsWriteOutcome>;
  /**
   * Publish exact bytes, with no text rules applied (for copying, overlay commit, restores).
   * Same intent and atomicity rules as writeText.
   */
  writeBytes(
    target: FsTarget,
    bytes: Uint8Array,
    intent?: FsWriteIntent,
    options?: FsWriteOptions,
  ): Promise<FsWriteOutcome>;
  /**
   * V7: as `writeBytes`, with the new content as a stream read once, in order: a file of any size
   * is published in memory bounded by a chunk where the provider has `swapFrom` (over one
   * without, the stream is gathered, and beyond the text limit it is FS_TOO_LARGE). Same intent,
   * atomicity and durability rules: readers see the old bytes or all the new, never a part. An
   * error thrown by the source aborts the write, nothing published, and is passed on; a broken
   * intent may leave the source unread. Optional so that wrappers need not forward it;
   * `createFs` always gives it.
   */
  writeBytesFrom?(
    target: FsTarget,
    source: AsyncIterable<Uint8Array>,
    intent?: FsWriteIntent,
    options?: FsWriteOptions,
  ): Promise<FsWriteOutcome>;
  editText(
    target: FsTarget,
    edit: FsEditRequest,
    guard?: { readonly version: FsVersion },
    options?: FsTextWriteOptions,
  ): Promise<FsEditOutcome>;
  remove(target: FsTarget, intent?: FsWriteIntent, options?: FsWriteOptions): Promise<void>;
  /**
   * Makes every deferred write and removal in these directories durable (F1). Optional, so that
   * wrappers need not forward it: without it, or with a provider that has no `flush`, every write
   * is already durable when it returns (or the store has no such notion).
   */
  flush?(directories: readonly FsTarget[], options?: FsOpOptions): Promise<void>;
  /**
   * B1: publishes guarded changes to distinct files all or nothing: every guard holds and every
   * change is made, or none is (an FsError with the first failing change's code, naming it).
   * Atomic where the provider has `applyBatch`; elsewhere the changes are made one by one and
   * undone newest first on a failure (a crash part-way leaves those already made). Optional as
   * `flush`; `createFs` always gives it.
   */
  applyChanges?(changes: readonly FsChange[], options?: FsOpOptions): Promise<FsChangesOutcome>;
  /** D1: creates the directory and any missing parents; an existing directory is no error. */
  mkdir(target: FsTarget, options?: FsOpOptions): Promise<void>;
  /** D2: removes an empty directory, or with `recursive` a directory and everything below it. */
  rmdir(target: FsTarget, options?: FsRmdirOptions): Promise<void>;
  /** D3: moves a file or directory atomically; see FsRenameOptions for the guards. */
  rename(from: FsTarget, to: FsTarget, options?: FsRenameOptions): Promise<void>;
  /**
   * D4: every entry below a directory, in tree order (a directory before its contents, siblings in
   * code-point order). Descends only into real subdirectories, never through a symlink.
   */
  /**
   * Present when the provider can narrow a search (see FsProvider.searchCandidates): the keys
   * of the files in `root`'s subtree that contain the bytes, or undefined when it cannot tell.
   * With `query.contents`, maybe the bytes of some (never over the bounds asked or the text
   * limit); `textStreamOf` turns them into what `streamText` would give.
   */
  searchCandidates?(root: FsTarget, query: FsSearchQuery, options?: FsOpOptions): Promise<FsSearchCandidates | undefined>;
  /**
   * Present when the provider reads many small files at once (see FsProvider.searchReads): per
   * target, its bytes (never over `maxBytes` or the text limit, and all of them together never
   * over `maxTotalBytes`), null (text without `query.contains`), or undefined (read it the usual
   * way). `textStreamOf` turns bytes into
   * what `streamText` would give.
   */
  searchReads?(targets: readonly FsTarget[], query: FsSearchReadQuery, options?: FsOpOptions): Promise<readonly (Uint8Array | null | undefined)[]>;
  walk(target: FsTarget, options?: FsWalkOptions): AsyncIterable<FsWalkEntry>;
  /**
   * X1: sets or clears the executable bit of a regular file, as `chmod +x` / `chmod -x` do; the
   * bytes and their version stay. FS_UNSUPPORTED where the store has no such bit. Optional so
   * that wrappers need not forward it; `createFs` always gives it.
   */
  setExecutable?(target: FsTarget, executable: boolean, options?: FsOpOptions): Promise<void>;
  /**
   * K1: creates a symbolic link at `target` (resolved with `noFollow`) whose text is `linkText`,
   * never followed at creation. FS_ALREADY_EXISTS when anything is there, FS_NOT_FOUND when the
   * parent directory is missing, FS_UNSUPPORTED where the store has no links. Optional as
   * `setExecutable`.
   */
  symlink?(target: FsTarget, linkText: string, options?: FsOpOptions): Promise<void>;
  /** K1: the text of the link at `target` (resolved with `noFollow`); FS_INVALID_ARGUMENT for anything that is not a link. */
  readlink?(target: FsTarget, options?: FsOpOptions): Promise<string>;
  /**
   * K2: removes the link at `target` (resolved with `noFollow`) itself; what it leads to is
   * untouched. FS_NOT_FOUND when nothing is there, FS_INVALID_ARGUMENT for anything that is not a
   * link (`remove` and `rmdir` remove those). Optional as `symlink`.
   */
  removeLink?(target: FsTarget, options?: FsOpOptions): Promise<void>;
  /**
   * K2: moves the link at `from` (resolved with `noFollow`) to `to` (likewise) with its text
   * unchanged; what it leads to stays where it is. FS_ALREADY_EXISTS when `to` holds anything,
   * unless `replace`, which replaces a file or link there (never a directory: FS_NOT_REGULAR_FILE);
   * FS_NOT_FOUND when the parent of `to` is missing. Optional as `symlink`.
   */
  renameLink?(from: FsTarget, to: FsTarget, options?: FsLinkRenameOptions): Promise<void>;
  /**
   * W1: the changes made to this filesystem from now on, as an async iterator (see FsWatch and
   * docs/feed.md). Present only where the store can report changes (memory, overlay, PostgreSQL).
   * Best effort and bounded: a consumer that falls behind gets one `overflow` event instead of the
   * events dropped.
   */
  watch?(options?: FsWatchOptions): FsWatch;
}

/** Options of `renameLink`. */
export interface FsLinkRenameOptions extends FsOpOptions {
  /** Replace a file or link at the destination (default false: FS_ALREADY_EXISTS). */
  readonly replace?: boolean;
}

export type { FsError };
