import { FsError } from './errors.js';
import type { FsEntryType, FsExpect, FsObservation, FsProviderRename, FsVersion } from './types.js';

/**
 * G7: whether a swap's expectation holds for the current file (its version, or undefined when
 * there is none). Providers call it inside their atomic step; it is the whole comparison.
 */
export function expectHolds(expect: FsExpect, current: { readonly version: FsVersion } | undefined): boolean {
  switch (expect.kind) {
    case 'any':
      return true;
    case 'absent':
      return current === undefined;
    case 'present':
      return current !== undefined && current.version === expect.version;
    default:
      throw new FsError('FS_INVALID_ARGUMENT', `unknown swap expectation ${JSON.stringify(expect)}`);
  }
}

/** The observation a swap reports: present at the file's version, or absent. */
export function observe(current: { readonly version: FsVersion } | undefined): FsObservation {
  return current === undefined ? { kind: 'absent' } : { kind: 'present', version: current.version };
}

/** What a rename's checks need to know of the source or the destination. */
export interface RenameSide {
  readonly type: FsEntryType;
  /** A file's version (only a file's is compared). */
  readonly version?: FsVersion;
  /** For a directory destination: whether it has no entries. */
  readonly empty?: boolean;
}

/**
 * D3: the one set of rename rules, for providers to call inside their atomic step with the
 * current state of both names. Throws the FsError the caller gets, or returns what must go from
 * the destination before the move: nothing, or the file or empty directory being replaced.
 */
export function checkRename(
  what: string,
  source: RenameSide | undefined,
  dest: RenameSide | undefined,
  options: Pick<FsProviderRename, 'expect' | 'replace'>,
): 'none' | 'file' | 'directory' {
  if (source === undefined) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
  if (source.type === 'other') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the source is not a regular file or directory`);
  if (options.expect !== undefined) {
    if (source.type !== 'file') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: a version guard needs a file, and the source is a directory`);
    if (source.version !== options.expect) throw new FsError('FS_STALE_VERSION', `${what}: the source changed since it was read`);
  }
  if (dest === undefined) {
    if (typeof options.replace === 'string') throw new FsError('FS_STALE_VERSION', `${what}: the destination no longer exists`);
    return 'none';
  }
  if (options.replace === false) {
    throw new FsError('FS_ALREADY_EXISTS', `${what}: the destination already exists (pass replace to overwrite it)`);
  }
  if (typeof options.replace === 'string' && (dest.type !== 'file' || dest.version !== options.replace)) {
    throw new FsError('FS_STALE_VERSION', `${what}: the destination changed since it was read`);
  }
  if (dest.type === 'other') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the destination is not a regular file or directory`);
  if (source.type === 'file' && dest.type === 'directory') {
    throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the destination is a directory`);
  }
  if (source.type === 'directory' && dest.type === 'file') {
    throw new FsError('FS_NOT_DIRECTORY', `${what}: the destination is a file, and the source a directory`);
  }
  if (dest.type === 'directory') {
    if (!dest.empty) throw new FsError('FS_NOT_EMPTY', `${what}: the destination is a directory that is not empty`);
    return 'directory';
  }
  return 'file';
}

/** D2: a non-empty directory goes only when asked. */
/**
 * D5 inside a provider's atomic step: FS_INVALID_ARGUMENT when any of `keys` is the root's key.
 * The seam refuses the root before it calls the provider; a provider that follows a link that
 * appeared after that (a name swapped for a link to the root) calls this where it acts.
 */
export function checkNotRoot(what: string, rootKey: string, ...keys: readonly string[]): void {
  if (keys.includes(rootKey)) throw new FsError('FS_INVALID_ARGUMENT', `${what}: the root is never removed, moved or replaced`);
}

export function checkRmdir(what: string, entries: number, recursive: boolean): void {
  if (entries > 0 && !recursive) {
    throw new FsError('FS_NOT_EMPTY', `${what}: the directory is not empty (${entries} ${entries === 1 ? 'entry' : 'entries'}); pass recursive to remove it all`);
  }
}
