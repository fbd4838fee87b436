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
}

export interface FsDirEntry {
  readonly name: string;
  readonly type: FsEntryType;
  readonly target: FsTarget;
  readonly size?: number;
  /** As `FsInfo.mtimeMs`: optional, informational. */
  readonly mtimeMs?: number;
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

export interface FsResolveOptions extends FsOpOptions {
  /** Relative paths resolve against this directory (default: the filesystem's cwd). */
  readonly cwd?: string;
}

export interface FsTextRead {
  /** Decoded text without a leading BOM. */
  readonly text: string;
  /** Version of exactly the bytes that were decoded. */
  readonly version: FsVersion;
  readonly size: number;
  readonly bom: boolean;
}

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
  streamText(target: FsTarget, options?: FsOpOptions): Promise<FsTextStream>;
  readBytes(target: FsTarget, options: FsOpOptions & { readonly maxBytes: number }): Promise<FsBytesRead>;
  listDir(target: FsTarget, options?: FsOpOptions): Promise<FsDirEntry[]>;
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
    options?: FsOpOptions,
  ): Promise<FsWriteOutcome>;
  editText(
    target: FsTarget,
    edit: FsEditRequest,
    guard?: { readonly version: FsVersion },
    options?: FsOpOptions,
  ): Promise<FsEditOutcome>;
  remove(target: FsTarget, intent?: FsWriteIntent, options?: FsOpOptions): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Provider SPI: what a backend implements. Storage only; text semantics come from the seam.
// ---------------------------------------------------------------------------------------------

/** The current state of a file as the provider sees it inside its critical section. */
export interface FsCurrent {
  readonly bytes: Uint8Array;
  readonly version: FsVersion;
}

export interface FsProviderWrite extends FsOpOptions {
  /** Checked by the provider against the current state, inside its per-target critical section. */
  readonly intent?: FsWriteIntent;
  /**
   * Called once, inside the critical section after the intent check, with the current bytes
   * (undefined when the file is absent). Returns the bytes to publish, or throws an FsError to
   * abort with nothing written.
   */
  readonly produce: (current: FsCurrent | undefined) => Uint8Array;
}

export interface FsProvider {
  /** Absolute directory the provider is confined to; the seam rejects paths lexically outside it. */
  readonly root?: string;
  /** Default cwd for relative paths (default: `root`, else `/`). */
  readonly cwd?: string;
  /**
   * Map a canonical absolute POSIX path (already validated by the seam: absolute, normalised,
   * no NUL) to a target. Aliases must give one targetKey. Throws FS_OUTSIDE_ROOT when the path
   * resolves (e.g. through a symlink) outside the provider's root.
   */
  resolve(path: string, options: FsOpOptions): Promise<FsTarget>;
  /** Optional; the default treats targetKeys as absolute POSIX paths. */
  contains?(parent: FsTarget, child: FsTarget): boolean;
  /** Never reads content for directories; a file's version is derived from its bytes. */
  stat(target: FsTarget, options: FsOpOptions): Promise<FsInfo | undefined>;
  /**
   * Read a whole regular file. FS_NOT_FOUND when absent, FS_NOT_REGULAR_FILE for anything that
   * is not a regular file (never blocks), FS_TOO_LARGE when it exceeds maxBytes (never truncates).
   */
  read(target: FsTarget, options: FsOpOptions & { readonly maxBytes: number }): Promise<FsCurrent>;
  /**
   * Atomically publish the bytes returned by `produce`, under the per-target lock, after checking
   * the intent: replaceIfVersion on an absent or different version → FS_STALE_VERSION;
   * createIfAbsent on an existing file → FS_NOT_OBSERVED. Missing parent directories are created.
   */
  write(target: FsTarget, options: FsProviderWrite): Promise<{ version: FsVersion; created: boolean }>;
  /** Direct children, sorted by name in code-point order. */
  listDir(target: FsTarget, options: FsOpOptions): Promise<FsDirEntry[]>;
  /** Remove a file under the per-target lock, after checking a replaceIfVersion intent. */
  remove(target: FsTarget, options: FsOpOptions & { readonly intent?: FsWriteIntent }): Promise<void>;
  /**
   * Optional native edit (e.g. a remote compare-and-edit). When present the seam delegates to it
   * after validating arguments; the conformance suite holds it to the same rules as the seam's.
   */
  editText?(
    target: FsTarget,
    edit: Required<FsEditRequest>,
    guard: { readonly version: FsVersion } | undefined,
    options: FsOpOptions,
  ): Promise<FsEditOutcome>;
}

export type { FsError };
