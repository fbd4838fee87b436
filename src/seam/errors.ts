/** Every failure that reaches a caller of the seam is an FsError carrying one of these codes. */
export const FS_ERROR_CODES = [
  'FS_NOT_FOUND',
  'FS_NOT_DIRECTORY',
  'FS_NOT_TEXT',
  'FS_NOT_REGULAR_FILE',
  'FS_TOO_LARGE',
  'FS_PERMISSION_DENIED',
  'FS_IO_ERROR',
  'FS_STALE_VERSION',
  'FS_NOT_OBSERVED',
  'FS_AMBIGUOUS_EDIT',
  'FS_EDIT_NOT_FOUND',
  'FS_ABORTED',
  'FS_OUTSIDE_ROOT',
  'FS_READ_ONLY',
  'FS_CONFLICT',
  'FS_INVALID_ARGUMENT',
  'FS_NOT_EMPTY',
  'FS_ALREADY_EXISTS',
  'FS_TIMEOUT',
  'FS_UNSUPPORTED',
  'FS_QUOTA_EXCEEDED',
] as const;

export type FsErrorCode = (typeof FS_ERROR_CODES)[number];

export class FsError extends Error {
  override readonly name = 'FsError';
  readonly code: FsErrorCode;

  constructor(code: FsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  toJSON(): { name: 'FsError'; code: FsErrorCode; message: string } {
    return { name: this.name, code: this.code, message: this.message };
  }
}

export function isFsError(value: unknown, code?: FsErrorCode): value is FsError {
  return value instanceof FsError && (code === undefined || value.code === code);
}

const ERRNO_TO_CODE: Record<string, FsErrorCode> = {
  ENOENT: 'FS_NOT_FOUND',
  ENOTDIR: 'FS_NOT_DIRECTORY',
  ENOTEMPTY: 'FS_NOT_EMPTY',
  EEXIST: 'FS_ALREADY_EXISTS',
  EISDIR: 'FS_NOT_REGULAR_FILE',
  EACCES: 'FS_PERMISSION_DENIED',
  EPERM: 'FS_PERMISSION_DENIED',
  EROFS: 'FS_READ_ONLY',
  EFBIG: 'FS_TOO_LARGE',
  ERR_FS_FILE_TOO_LARGE: 'FS_TOO_LARGE',
  ENAMETOOLONG: 'FS_INVALID_ARGUMENT',
  ERR_INVALID_ARG_VALUE: 'FS_INVALID_ARGUMENT',
  ERR_INVALID_ARG_TYPE: 'FS_INVALID_ARGUMENT',
  ABORT_ERR: 'FS_ABORTED',
};

const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'not found',
  ENOTDIR: 'a path segment is not a directory',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only filesystem',
  EFBIG: 'file too large',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EIO: 'input/output error',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'name too long',
  EMFILE: 'too many open files',
  EBUSY: 'resource busy',
  EEXIST: 'already exists',
  ENOTEMPTY: 'directory not empty',
  EXDEV: 'cross-device link',
};

/**
 * Translates anything thrown below the seam into an FsError. `what` is the operation and path
 * as the caller should read it, e.g. `cannot write "/a.txt"`.
 */
export function toFsError(err: unknown, what: string): FsError {
  if (err instanceof FsError) return err;
  const errno = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  const name = typeof err === 'object' && err !== null ? (err as { name?: unknown }).name : undefined;
  if (name === 'AbortError') return new FsError('FS_ABORTED', `${what}: aborted`, { cause: err });
  if (typeof errno === 'string') {
    const code = ERRNO_TO_CODE[errno] ?? 'FS_IO_ERROR';
    const text = ERRNO_TEXT[errno] ?? errno;
    return new FsError(code, `${what}: ${text} (${errno})`, { cause: err });
  }
  const detail = err instanceof Error ? err.message : String(err);
  return new FsError('FS_IO_ERROR', `${what}: ${detail}`, { cause: err });
}

export function throwIfAborted(signal: AbortSignal | undefined, what: string): void {
  // A generic lookup: node gives every AbortSignal a map of its own, and a plain `signal.aborted`
  // inlined into a caller's optimized code threw that code away at each new signal (measured:
  // grep's walk and reads were recompiled over the first five searches of a process).
  if (signal !== undefined && Reflect.get(signal, 'aborted') === true) throw new FsError('FS_ABORTED', `${what}: aborted`);
}

/**
 * `fn`, a synchronous call that fails as often as not (a path looked up before it is created),
 * with no stack trace taken for the errors it throws: capturing one cost several times the call
 * (a quarter of the time of creating a file in memory). Synchronous, so nothing else runs while
 * the limit is lowered. The errors it throws become FsErrors, which take their own stack.
 */
export function quietly<T>(fn: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return fn();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
