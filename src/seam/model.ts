import type { FsError } from './errors.js';

/*
 * The values the contract speaks of: targets, versions, entries, intents, and the options and
 * outcomes of its calls. Shared by the FileSystem contract (types.ts) and the provider SPI
 * (provider.ts); import them from types.ts.
 */

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

export interface FsStatOptions extends FsOpOptions {
  /**
   * false: answer existence, type, size and the executable bit only; `version` is then
   * `UNVERSIONED`, and no file is hashed nor directory listed to mint one. Default true.
   */
  readonly versioned?: boolean;
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

export interface FsBytesStreamOptions extends FsStreamOptions {
  /** Byte offset where the chunks begin (default 0); past the end of the file, no chunks. */
  readonly start?: number;
  /**
   * Each chunk is good only until the next is asked for: the stream may read the next one into
   * the same memory, sparing an allocation per chunk. For a caller that copies what it keeps.
   */
  readonly reuse?: boolean;
}

/** A file's bytes as a stream (`streamBytes`): its whole size and version, and chunks from `start`. */
export interface FsBytesStream {
  /** Version of the whole file (`UNVERSIONED` when asked not to compute it). */
  readonly version: FsVersion;
  /** Size of the whole file in bytes. */
  readonly size: number;
  /** The bytes from `start` to the end; a loop may stop early, and what is held is then released. */
  readonly chunks: AsyncIterable<Uint8Array>;
}

export interface FsBytesRead {
  readonly bytes: Uint8Array;
  readonly version: FsVersion;
}

export interface FsWriteOutcome {
  readonly operation: 'create' | 'update';
  readonly version: FsVersion;
  readonly size: number;
  /** With `withBytes` (writeText): the bytes the write replaced, null when it created the file. */
  readonly replaced?: Uint8Array | null;
  /** With `withBytes` (writeText): the bytes it published. */
  readonly published?: Uint8Array;
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
  /** With `withBytes`: the bytes the edit replaced. */
  readonly replaced?: Uint8Array;
  /** With `withBytes`: the bytes it published. */
  readonly published?: Uint8Array;
}

/** Options of writeText and editText. */
export interface FsTextWriteOptions extends FsOpOptions {
  /**
   * Return the bytes replaced and published (`replaced`, `published`), e.g. to show a diff
   * without reading the file again. The edit then always runs through the seam's own read and
   * swap, not a provider's native editText.
   */
  readonly withBytes?: boolean;
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
  /**
   * A hint for providers that filter in storage: files (not directories or links) whose name ends
   * with none of `fileNameEndsWith` may be left out; a provider that leaves any out calls
   * `leftOut` with how many, no later than it hands over the first entry that follows them in
   * walk order, so that a budget of entries can still count them (`narrowing` helps). The caller
   * matches every entry it receives; a provider may ignore the hint.
   */
  readonly narrow?: FsWalkNarrowing;
}

export interface FsWalkNarrowing {
  readonly fileNameEndsWith: readonly string[];
  readonly leftOut: (count: number) => void;
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
