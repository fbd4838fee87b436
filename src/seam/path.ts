import { posix } from 'node:path';
import { FsError } from './errors.js';

/**
 * P1: the one canonicaliser. Turns a caller's path string into an absolute, normalised POSIX
 * path. No `~` expansion, no URL decoding, no Unicode normalisation: the string that is checked
 * is the string that is used.
 */
export function canonicalPath(input: unknown, cwd: string): string {
  if (typeof input !== 'string') {
    throw new FsError('FS_INVALID_ARGUMENT', `path must be a string, got ${describeType(input)}`);
  }
  if (input.length === 0) throw new FsError('FS_INVALID_ARGUMENT', 'path must be a non-empty string');
  if (input.includes('\0')) throw new FsError('FS_INVALID_ARGUMENT', `path ${JSON.stringify(input)} contains a NUL byte`);
  if (input.includes('\\')) {
    throw new FsError(
      'FS_INVALID_ARGUMENT',
      `path ${JSON.stringify(input)} contains a backslash; use "/" as the separator`,
    );
  }
  if (!input.isWellFormed()) {
    throw new FsError('FS_INVALID_ARGUMENT', `path ${JSON.stringify(input)} contains a lone surrogate`);
  }
  const base = posix.isAbsolute(input) ? '/' : canonicalCwd(cwd);
  // posix.resolve collapses `..` lexically and strips trailing slashes; `//x` becomes `/x`.
  const path = posix.resolve(base, input);
  const segments = countSegments(path);
  if (segments > MAX_PATH_SEGMENTS) {
    throw new FsError(
      'FS_INVALID_ARGUMENT',
      `path ${JSON.stringify(input.length > 200 ? `${input.slice(0, 200)}…` : input)} has ${segments} segments; at most ${MAX_PATH_SEGMENTS} are allowed`,
    );
  }
  return path;
}

/**
 * The most segments a canonical path may have. Far beyond any real tree (Linux's PATH_MAX of 4096
 * bytes allows 2048), and low enough that every per-segment walk stays cheap.
 */
export const MAX_PATH_SEGMENTS = 4096;

function countSegments(path: string): number {
  let n = 0;
  for (let i = path.indexOf('/'); i !== -1 && n <= MAX_PATH_SEGMENTS; i = path.indexOf('/', i + 1)) n++;
  return path === '/' ? 0 : n;
}

function canonicalCwd(cwd: string): string {
  if (typeof cwd !== 'string' || !posix.isAbsolute(cwd) || cwd.includes('\0')) {
    throw new FsError('FS_INVALID_ARGUMENT', `cwd must be an absolute path, got ${JSON.stringify(cwd)}`);
  }
  return posix.normalize(cwd);
}

/** Containment on canonical absolute paths, with a separator boundary (`/root-evil` is not in `/root`). */
export function isWithin(parent: string, child: string): boolean {
  if (parent === child) return true;
  const prefix = parent.endsWith('/') ? parent : `${parent}/`;
  return child.startsWith(prefix);
}

/** The key of `name` directly inside `parent`, where keys are canonical absolute paths. */
export function pathChild(parent: string, name: string): string {
  return parent.endsWith('/') ? `${parent}${name}` : `${parent}/${name}`;
}

/**
 * `child` relative to `parent` when it lies inside it (`''` for `parent` itself), else undefined.
 * Lexical, on canonical absolute paths; whole segments compare, so `..foo` is a name inside.
 */
export function relativeInside(parent: string, child: string): string | undefined {
  if (child === parent) return '';
  if (parent === '/') return child.startsWith('/') ? child.slice(1) : undefined;
  return child.startsWith(`${parent}/`) ? child.slice(parent.length + 1) : undefined;
}

/** A value as JSON for an error message, or as a string when it has no JSON form (a cycle, a BigInt). */
export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
