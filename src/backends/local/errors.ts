import type { BigIntStats } from 'node:fs';
import { FsError, toFsError } from '../../seam/errors.js';
import { Moved } from './anchor.js';

export function errnoOf(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

export function isAbsent(err: unknown): boolean {
  const code = errnoOf(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export function ignoreErrno(...codes: string[]) {
  return (err: unknown): void => {
    if (!codes.includes(errnoOf(err) ?? '')) throw err;
  };
}

function kindOf(st: BigIntStats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

export function notRegular(what: string, st: BigIntStats): FsError {
  return new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file (${kindOf(st)})`);
}

export function notFound(what: string): FsError {
  return new FsError('FS_NOT_FOUND', `${what}: not found`);
}

export function tooLarge(what: string, size: bigint | undefined, maxBytes: number): FsError {
  const detail = size === undefined ? 'the file holds more than' : `${size} bytes exceeds`;
  return new FsError('FS_TOO_LARGE', `${what}: ${detail} the ${maxBytes}-byte limit`);
}

export function mapError(err: unknown, what: string): FsError {
  if (err instanceof Moved) {
    return new FsError('FS_IO_ERROR', `${what}: the path changed while in use; resolve it again`, { cause: err });
  }
  const code = errnoOf(err);
  if (code === 'ENXIO') return new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file (ENXIO)`, { cause: err });
  return toFsError(err, what);
}

/** Runs `fn`, turning whatever it throws into an FsError about `what`. */
export async function guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapError(err, what);
  }
}

/** The error openDir's failure on the directory itself means (missing, or not a directory). */
export function dirOpenError(err: unknown, what: string): unknown {
  const code = errnoOf(err);
  if (code === 'ENOENT') return notFound(what);
  if (code === 'ENOTDIR') return new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
  return err;
}
