import { FsError, canonicalPath, throwIfAborted, type FileSystem, type FsErrorCode, type FsTarget } from '../seam/index.js';
import { describeType } from '../seam/path.js';
import { MAX_GLOB_CHARS } from './dialect.js';

export const DEFAULT_CONCURRENCY = 8;
export const MAX_RECORDED_SKIPS = 50;

/** Directories never walked by grep (and ignored by the glob tool). */
export const VCS_DIRECTORIES: readonly string[] = ['.git', '.svn', '.hg', '.bzr', '.jj', '.sl'];

/** Something a search passed over, and why. */
export interface SearchSkip {
  readonly path: string;
  /** `loop`: a directory that contains one the walk is already inside (a symlink cycle). */
  readonly reason: 'binary' | 'too-large' | 'unreadable' | 'loop';
  readonly code?: FsErrorCode;
  readonly message?: string;
}

export interface SkipCounts {
  readonly binary: number;
  readonly tooLarge: number;
  readonly unreadable: number;
  readonly loops: number;
}

export async function searchDirectory(
  fs: FileSystem,
  cwd: string | undefined,
  verb: string,
  signal: AbortSignal | undefined,
): Promise<{ dir: string; target: FsTarget }> {
  const dir = canonicalPath(cwd ?? fs.cwd, fs.cwd);
  throwIfAborted(signal, `cannot ${verb} in "${dir}"`);
  const target = await fs.resolve(dir, { ...(signal ? { signal } : {}) });
  const info = await fs.stat(target, { versioned: false, ...(signal ? { signal } : {}) });
  if (info === undefined) throw new FsError('FS_NOT_FOUND', `cannot ${verb} in "${dir}": not found`);
  if (info.type !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `cannot ${verb} in "${dir}": not a directory`);
  return { dir, target };
}

export function checkPattern(pattern: unknown, name: string): asserts pattern is string {
  if (typeof pattern !== 'string') throw new FsError('FS_INVALID_ARGUMENT', `${name} must be a string, got ${describeType(pattern)}`);
  if (pattern.length === 0) throw new FsError('FS_INVALID_ARGUMENT', `${name} must be a non-empty glob`);
  if (pattern.includes('\0')) throw new FsError('FS_INVALID_ARGUMENT', `${name} ${JSON.stringify(pattern)} contains a NUL byte`);
  // The matcher below refuses long patterns with a plain Error; say so as an argument error first.
  if (pattern.length > MAX_GLOB_CHARS) {
    throw new FsError('FS_INVALID_ARGUMENT', `${name} is ${pattern.length} characters long; the limit is ${MAX_GLOB_CHARS}`);
  }
}

export function positiveInteger(value: unknown, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new FsError('FS_INVALID_ARGUMENT', `${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}
