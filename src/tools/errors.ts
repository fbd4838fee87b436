import { FsError, toFsError, type FsErrorCode } from '../seam/index.js';

/** What the model should do next, for the errors it can fix by reading. */
export const REMEDIES: Partial<Record<FsErrorCode, string>> = {
  FS_STALE_VERSION: 're-read the file, then retry',
  FS_NOT_OBSERVED: 'read the file first, then retry',
  FS_QUOTA_EXCEEDED: 'write less, or remove files this sandbox holds; only its user can raise the limit',
};

/** The error as an FsError, with its remedy appended (once) and its code kept. */
export function withRemedy(err: unknown, what: string): FsError {
  const error = toFsError(err, what);
  const remedy = REMEDIES[error.code];
  if (remedy === undefined || error.message.endsWith(remedy)) return error;
  return new FsError(error.code, `${error.message} — ${remedy}`, { cause: error });
}
