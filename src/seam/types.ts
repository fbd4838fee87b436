import type { FsError } from './errors.js';

declare const targetKeyBrand: unique symbol;
declare const versionBrand: unique symbol;

/** Canonical, opaque identity of a file: aliases of one file give one key. Never parse it. */
export type FsTargetKey = string & { readonly [targetKeyBrand]: true };
/** Opaque version minted by the provider. Different bytes, different version; same bytes, same version. */
export type FsVersion = string & { readonly [versionBrand]: true };

export const FsTargetKey = (key: string): FsTargetKey => key as FsTargetKey;
export const FsVersion = (version: string): FsVersion => version as FsVersion;

export interface FsTarget {
  readonly targetKey: FsTargetKey;
  /** The path as the model and UI should see it (absolute, not symlink-resolved). */
  readonly displayPath: string;
}

export type FsEntryType = 'file' | 'directory' | 'other';

export interface FsInfo {
  readonly type: FsEntryType;
  readonly version: FsVersion;
  /** Size in bytes, for files. */
  readonly size?: number;
  /**
   * Last modification time in ms since the epoch, when the provider knows it. Informational only
   * (search orders by it); never a version: versions come from content.
   */
  readonly mtimeMs?: number;
  /**
   * X1: for a regular file, whether it is executable, where the store keeps such a bit (absent
   * where it does not). Not part of the version: a mode change keeps the bytes' version.
   */
  readonly executable?: boolean;
}

export interface FsDirEntry {
  readonly name: string;
  readonly type: FsEntryType;
  readonly target: FsTarget;
  readonly size?: number;
  /** As `FsInfo.mtimeMs`: optional, informational. */
  readonly mtimeMs?: number;
  /** As `FsInfo.executable`; like `size`, may be left out of a listing made without stats. */
  readonly executable?: boolean;
}

/** Omitted intent means unconditional (still atomic and locked). */
export type FsWriteIntent =
  | { readonly kind: 'createIfAbsent' }
  | { readonly kind: 'replaceIfVersion'; readonly version: FsVersion };

export type FsObservation =
  | { readonly kind: 'present'; readonly version: FsVersion }
  | { readonly kind: 'absent' };

export interface FsEditRequest {
  readonly oldString: string;
  readonly newString: string;
  readonly replaceAll?: boolean;
}

export interface FsOpOptions {
  readonly signal?: AbortSignal;
}

/**
 * Options of a file write or removal. `durability: 'deferred'` lets a provider that writes to
 * disk leave the new directory entry unflushed until `flush` names its directory (the content is
 * still on disk before it is published, so a crash shows the old file or the new, never a mix).
 * Providers without such a distinction ignore it.
 */
export interface FsWriteOptions extends FsOpOptions {
  readonly durability?: 'immediate' | 'deferred';
}

export interface FsResolveOptions extends FsOpOptions {
  /** Relative paths resolve against this directory (default: the filesystem's cwd). */
  readonly cwd?: string;
  /**
   * K1: do not follow a symbolic link in the last component: the target names the link itself
   * (for `symlink` and `readlink`). Links in the parent directories are still followed.
   */
  readonly noFollow?: boolean;
}

export interface FsTextRead {
  /** Decoded text without a leading BOM. */
  readonly text: string;
  /** Version of exactly the bytes that were decoded. */
  readonly version: FsVersion;
  readonly size: number;
  readonly bom: boolean;
}

export interface FsStreamOptions extends FsOpOptions {
  /**
   * The caller will not use the version (search): the provider may skip computing it (no content
   * digest), and the stream's `version` is then `UNVERSIONED`, which no file ever has.
   */
  readonly unversioned?: boolean;
}

/** The version of a read made with `unversioned`: never current, so never a valid guard. */
export const UNVERSIONED = 'unversioned' as FsVersion;

export interface FsTextStream {
  readonly version: FsVersion;
  readonly size: number;
  readonly bom: boolean;
  readonly chunks: AsyncIterable<string>;
}

export interface FsBytesRead {
  readonly bytes: Uint8Array;
  readonly version: FsVersion;
}

export interface FsWriteOutcome {
  readonly operation: 'create' | 'update';
  readonly version: FsVersion;
  readonly size: number;
}

/** A 1-based inclusive line range in the file after the edit. */
export interface FsLineRange {
  readonly start: number;
  readonly end: number;
}

export interface FsEditOutcome {
  readonly version: FsVersion;
  readonly replacements: number;
  /** Where each replacement landed, in the edited file. */
  readonly lines: readonly FsLineRange[];
}

/**
 * One guarded change of `applyChanges`. Every change carries its guard: a write creates
 * (`createIfAbsent`) or replaces one version; a removal and a move name the version they take
 * away; a move's `replace` is what the destination may hold (nothing, or a file at that version).
 */
export type FsChange =
  | { readonly kind: 'write'; readonly target: FsTarget; readonly bytes: Uint8Array; readonly intent: FsWriteIntent }
  | { readonly kind: 'remove'; readonly target: FsTarget; readonly version: FsVersion }
  | {
      readonly kind: 'move';
      readonly from: FsTarget;
      readonly to: FsTarget;
      readonly expect: FsVersion;
      readonly replace: false | FsVersion;
      /** The content the file has at `to` after the move. */
      readonly bytes: Uint8Array;
    };

export interface FsChangesOutcome {
  /** For each change, in order: the version it published, or undefined for a removal. */
  readonly versions: readonly (FsVersion | undefined)[];
}

/** The `ctx.fs` contract. Every method rejects only with FsError. */
export interface FileSystem {
  /** Default directory for relative paths. */
  readonly cwd: string;
  /** The directory this filesystem is confined to, if any. */
  readonly root?: string;
  resolve(path: string, options?: FsResolveOptions): Promise<FsTarget>;
  /** True when `child` is `parent` or lies beneath it. */
  contains(parent: FsTarget, child: FsTarget): boolean;
  stat(target: FsTarget, options?: FsOpOptions): Promise<FsInfo | undefined>;
  readText(target: FsTarget, options?: FsOpOptions): Promise<FsTextRead>;
  streamText(target: FsTarget, options?: FsStreamOptions): Promise<FsTextStream>;
  readBytes(target: FsTarget, options: FsOpOptions & { readonly maxBytes: number }): Promise<FsBytesRead>;
  listDir(target: FsTarget, options?: FsListOptions): Promise<FsDirEntry[]>;
  writeText(
    target: FsTarget,
    content: string,
    intent?: FsWriteIntent,
    options?: FsOpOptions,
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
  editText(
    target: FsTarget,
    edit: FsEditRequest,
    guard?: { readonly version: FsVersion },
    options?: FsOpOptions,
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
}

/** Options of `walk`: both hooks let a caller (search) steer one walk instead of listing by hand. */
export interface FsWalkOptions extends FsOpOptions {
  /**
   * Asked for each real subdirectory after it was yielded (so the consumer has seen it) and before
   * its contents are listed: true leaves them out.
   */
  readonly prune?: (entry: FsWalkEntry) => boolean;
  /**
   * When given, a subdirectory below the walked one that cannot be listed (gone, unreadable) is
   * reported here and passed over; without it the walk fails. The walked directory itself always fails.
   */
  readonly onUnreadable?: (entry: FsWalkEntry, error: FsError) => void;
  /**
   * Asked with the walk path and name of each entry that is neither a directory nor a link,
   * before the provider describes it: false lets the provider leave out `size` and `mtimeMs`
   * (which may cost a stat each). Without it every entry is as listDir gives it. A hint only: a
   * provider may ignore it.
   */
  readonly wantsStats?: (path: string, name: string) => boolean;
}

export interface FsListOptions extends FsOpOptions {
  /**
   * false: entries that are not links may leave out `size` and `mtimeMs`, which on disk saves a
   * stat per entry (the type comes with the listing). Default true. A hint: a provider for which
   * they are free may still give them.
   */
  readonly stats?: boolean;
}

export interface FsRmdirOptions extends FsOpOptions {
  /** Also remove everything below (default false: a non-empty directory is FS_NOT_EMPTY). */
  readonly recursive?: boolean;
}

export interface FsRenameOptions extends FsOpOptions {
  /** The source must be a file at this version, or nothing moves (FS_STALE_VERSION). */
  readonly expect?: FsVersion;
  /**
   * What the destination may hold. `false` (default): nothing (FS_ALREADY_EXISTS otherwise).
   * `true`: a file, or an empty directory when moving a directory, which is replaced. A version:
   * a file at exactly that version (FS_STALE_VERSION otherwise).
   */
  readonly replace?: boolean | FsVersion;
}

/** An entry of `walk`: a listing entry plus where it sits below the walked directory. */
export interface FsWalkEntry extends FsDirEntry {
  /** The path below the walked directory, `/`-separated (`src/app.ts`). */
  readonly path: string;
}

// ---------------------------------------------------------------------------------------------
// Provider SPI v2: what a backend implements. Storage only: the seam owns locking, intents,
// retries and every text rule.
// ---------------------------------------------------------------------------------------------

export interface FsProviderReadOptions extends FsOpOptions {
  readonly maxBytes: number;
  /** A hint: the seam will not use the version, so the provider may return any (skip the digest). */
  readonly unversioned?: boolean;
}

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
  /** Follows links (P4); undefined when absent. A file's version is derived from its bytes. */
  stat(target: FsTarget, options: FsOpOptions): Promise<FsInfo | undefined>;
  /**
   * Read a whole regular file. FS_NOT_FOUND when absent, FS_NOT_REGULAR_FILE for anything that
   * is not a regular file (never blocks), FS_TOO_LARGE when it exceeds maxBytes (checked before
   * reading; never truncates).
   */
  read(target: FsTarget, options: FsProviderReadOptions): Promise<FsCurrent>;
  /**
   * G7: the one mutating file primitive, an atomic compare-and-swap. When `expect` holds, publish
   * `bytes` (creating missing parent directories) or remove the file (`bytes: null`) and return
   * `ok: true`; otherwise change nothing and return what the target holds. Throws
   * FS_NOT_REGULAR_FILE for a directory or special file, FS_NOT_DIRECTORY when a parent is a file.
   */
  swap(target: FsTarget, request: FsSwapRequest): Promise<FsSwapResult>;
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
  /** Direct children, sorted by name in code-point order; links are followed for the type (P4). */
  listDir(target: FsTarget, options: FsListOptions): Promise<FsDirEntry[]>;
  /** Optional bulk listing (D4); the seam walks with listDir when it is absent. */
  walk?(target: FsTarget, options: FsWalkOptions): AsyncIterable<FsWalkEntry>;
  /** D1: create the directory and its missing parents; existing directory: no error. */
  mkdir(target: FsTarget, options: FsOpOptions): Promise<void>;
  /** D2: remove a directory; non-empty without `recursive`: FS_NOT_EMPTY, nothing removed. */
  rmdir(target: FsTarget, options: FsOpOptions & { readonly recursive: boolean }): Promise<void>;
  /** D3: atomic move of a file or directory, with the guards of FsRenameOptions; creates missing parents of `to`. */
  rename(from: FsTarget, to: FsTarget, options: FsProviderRename): Promise<void>;
  /**
   * Optional native edit (e.g. a remote compare-and-edit). When present the seam delegates to it
   * after validating arguments, inside its per-target lock; the conformance suite holds it to the
   * same rules as the seam's. `editBytes` gives the seam's edit of a file's bytes.
   */
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
  editText?(
    target: FsTarget,
    edit: Required<FsEditRequest>,
    guard: { readonly version: FsVersion } | undefined,
    options: FsOpOptions,
  ): Promise<FsEditOutcome>;
}

export type { FsError };
