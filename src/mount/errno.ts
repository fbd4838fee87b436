import { constants } from 'node:os';
import { isFsError, type FsErrorCode } from '../seam/index.js';

const E = constants.errno;

/** What a program sees for each contract failure (positive errno; FUSE wants it negated). */
export const ERRNO_OF_CODE: Record<FsErrorCode, number> = {
  FS_NOT_FOUND: E.ENOENT,
  FS_NOT_DIRECTORY: E.ENOTDIR,
  FS_NOT_TEXT: E.EIO,
  FS_NOT_REGULAR_FILE: E.EISDIR,
  FS_TOO_LARGE: E.EFBIG,
  FS_PERMISSION_DENIED: E.EACCES,
  FS_IO_ERROR: E.EIO,
  // A publish that lost a race: the program's close fails rather than either change being lost.
  FS_STALE_VERSION: E.EIO,
  FS_NOT_OBSERVED: E.EEXIST,
  FS_AMBIGUOUS_EDIT: E.EIO,
  FS_EDIT_NOT_FOUND: E.EIO,
  FS_ABORTED: E.EINTR,
  FS_OUTSIDE_ROOT: E.EACCES,
  FS_READ_ONLY: E.EROFS,
  FS_CONFLICT: E.EIO,
  FS_INVALID_ARGUMENT: E.EINVAL,
  FS_NOT_EMPTY: E.ENOTEMPTY,
  FS_ALREADY_EXISTS: E.EEXIST,
  FS_TIMEOUT: E.ETIMEDOUT,
  FS_UNSUPPORTED: E.ENOTSUP,
  FS_QUOTA_EXCEEDED: E.EDQUOT,
};

/** The negative errno FUSE expects for anything thrown by the contract (EIO when it is no FsError). */
export function errnoOf(err: unknown): number {
  return -(isFsError(err) ? ERRNO_OF_CODE[err.code] : E.EIO);
}

/** A failure the mount itself answers with (refusals of what the contract cannot hold). */
export class Errno extends Error {
  readonly errno: number;

  constructor(errno: number) {
    // No stack: it is answered to the kernel, never shown, and a lookup of an absent name (a shell's
    // before each file it creates) makes one; the stack was most of such an answer's cost.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(`errno ${errno}`);
    Error.stackTraceLimit = limit;
    this.errno = errno;
  }
}

export const fail = (errno: number): never => {
  throw new Errno(errno);
};

export const toNegativeErrno = (err: unknown): number => (err instanceof Errno ? -err.errno : errnoOf(err));

export { E as ERRNO };
