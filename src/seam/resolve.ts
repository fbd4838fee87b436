import { posix } from 'node:path';
import { FsError } from './errors.js';
import type { FsVersion, FsWriteIntent } from './types.js';

export type NodeKind = 'missing' | 'link' | 'directory' | 'file' | 'other';

/** What symlink resolution needs from storage: the kind of an entry without following it, and link text. */
export interface LinkReader {
  kind(path: string): Promise<NodeKind> | NodeKind;
  readlink(path: string): Promise<string> | string;
}

export const MAX_SYMLINK_HOPS = 40;

/**
 * Resolves every symlink in an absolute path, including a dangling final link and links in
 * ancestors of a path that does not exist yet; the missing remainder is appended literally.
 * Relative link targets resolve from the link's directory. More than 40 hops: FS_IO_ERROR.
 * `onStep` sees every resolved prefix, the root's own ancestors included (`/`, `/srv` on the way to
 * `/srv/root`, or after an absolute link). A rooted provider refuses a prefix that is neither
 * inside its root nor an ancestor of it: `!isWithin(root, p) && !isWithin(p, root)`.
 */
export async function resolveLinks(
  path: string,
  reader: LinkReader,
  onStep?: (resolved: string, link: boolean) => void,
): Promise<string> {
  // A stack of the segments still to walk, next one last: pushes and pops are O(1) and nothing is
  // spread into an argument list, so a path of any length cannot overflow the call stack.
  const stack = segmentsOf(path).reverse();
  let resolved = '/';
  let hops = 0;
  while (stack.length > 0) {
    const seg = stack.pop()!;
    if (seg === '..') {
      resolved = posix.dirname(resolved);
      onStep?.(resolved, false);
      continue;
    }
    const candidate = posix.join(resolved, seg);
    const kind = await reader.kind(candidate);
    if (kind === 'link') {
      if (++hops > MAX_SYMLINK_HOPS) {
        throw new FsError('FS_IO_ERROR', `cannot resolve "${path}": too many levels of symbolic links`);
      }
      const target = await reader.readlink(candidate);
      const linked = segmentsOf(target);
      for (let i = linked.length - 1; i >= 0; i--) stack.push(linked[i]!);
      if (posix.isAbsolute(target)) resolved = '/';
      onStep?.(resolved, true);
      continue;
    }
    if (kind === 'missing' || kind === 'file' || kind === 'other') {
      // Nothing below a missing entry or a non-directory can be a link: append the rest lexically.
      const rest = posix.resolve(candidate, stack.reverse().join('/'));
      onStep?.(rest, false);
      return rest;
    }
    resolved = candidate;
    onStep?.(resolved, false);
  }
  return resolved;
}

function segmentsOf(path: string): string[] {
  return path.split('/').filter((s) => s !== '' && s !== '.');
}

/**
 * G1/G2: the one check of a write intent against the current state (a file's version, or
 * undefined when there is none), made by the seam before and after each swap.
 */
export function checkWriteIntent(intent: FsWriteIntent | undefined, current: { readonly version: FsVersion } | undefined, what: string): void {
  if (intent === undefined) return;
  if (intent.kind === 'createIfAbsent') {
    if (current !== undefined) {
      throw new FsError('FS_NOT_OBSERVED', `${what}: the file already exists, and the intent (createIfAbsent) allows only a create`);
    }
    return;
  }
  if (current === undefined) throw new FsError('FS_STALE_VERSION', `${what}: the file no longer exists`);
  if (current.version !== intent.version) {
    throw new FsError('FS_STALE_VERSION', `${what}: the file changed since it was read`);
  }
}

/** Code-point order of names (plain `sort()` compares UTF-16 units, which misorders astral characters). */
export function compareNames(a: string, b: string): number {
  // UTF-16 units order like code points except where a surrogate meets U+E000..U+FFFF; only
  // then (and for lone surrogates, which UTF-8 encodes as U+FFFD) are the bytes compared.
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if ((x & 0xf800) === 0xd800 || (y & 0xf800) === 0xd800) return Buffer.compare(Buffer.from(a), Buffer.from(b));
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
