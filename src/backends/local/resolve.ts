import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { FsError } from '../../seam/errors.js';
import { isWithin } from '../../seam/path.js';
import { resolveLinks, type LinkReader, type NodeKind } from '../../seam/resolve.js';
import { Moved } from './anchor.js';
import type { LocalContext } from './context.js';
import { isAbsent } from './errors.js';

const MAX_REDIRECTS = 4;

/** Resolution (P2, P3): every symlink hop is checked; the real path is the target key. */
export async function resolveKey(ctx: LocalContext, path: string): Promise<string> {
  const { root, fsp } = ctx;
  if (ctx.entryLstat !== undefined && isWithin(root, path) && isOwnRealPath(path, root)) return path;
  const outside = (where: string) =>
    new FsError('FS_OUTSIDE_ROOT', `"${path}" leads through a symbolic link to "${where}", which is outside the root "${root}"`);
  const reader: LinkReader = {
    async kind(p: string): Promise<NodeKind> {
      // The root was canonicalised at construction: its ancestors are directories, and nothing
      // else outside it is ever looked at.
      if (p !== root && isWithin(p, root)) return 'directory';
      if (!isWithin(root, p)) throw outside(p);
      try {
        // Synchronous where listings are (a thread-pool round trip per component otherwise).
        const st = ctx.entryLstat !== undefined ? ctx.entryLstat(p) : await fsp.lstat(p);
        if (st.isSymbolicLink()) return 'link';
        if (st.isDirectory()) return 'directory';
        return st.isFile() ? 'file' : 'other';
      } catch (err) {
        if (isAbsent(err)) return 'missing';
        throw err;
      }
    },
    readlink: (p: string) => fsp.readlink(p),
  };
  const key = await resolveLinks(path, reader, (resolved) => {
    if (!isWithin(root, resolved) && !isWithin(resolved, root)) throw outside(resolved);
  });
  if (!isWithin(root, key)) throw outside(key);
  return key;
}

/**
 * Whether `path` names an entry, or missing names below an existing directory, with no link on
 * the way: then it is its own key, known from one realpath call (in C) instead of a lookup per
 * component. Anything else (a link, a dangling link last, a file on the way) takes the checked
 * hop-by-hop way. No error is thrown on the way for a missing path.
 */
function isOwnRealPath(path: string, root: string): boolean {
  try {
    // A thrown error costs several times the call: a path about to be created is asked first.
    if (existsSync(path)) return realpathSync.native(path) === path;
    // Missing, or a dangling link (then lstat finds it).
    if (lstatSync(path, NO_THROW) !== undefined) return false;
    // Nothing below the nearest existing ancestor exists, so no link is there: that ancestor decides.
    for (let dir = dirname(path), below = path; dir !== below; below = dir, dir = dirname(dir)) {
      const st = lstatSync(dir, NO_THROW);
      if (st === undefined) continue;
      // The root is canonical (made so at construction).
      return st.isDirectory() && (dir === root || realpathSync.native(dir) === dir);
    }
  } catch {
    // A file on the way (ENOTDIR), or the tree changed meanwhile: the checked way answers.
  }
  return false;
}

const NO_THROW = { throwIfNoEntry: false } as const;

/** Runs `fn` on the key; when the tree changed under it, resolves the key again and retries. */
export async function withRedirects<T>(ctx: LocalContext, key: string, what: string, fn: (key: string) => Promise<T>): Promise<T> {
  let current = key;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(current);
    } catch (err) {
      if (!(err instanceof Moved)) throw err;
      if (attempt >= MAX_REDIRECTS) {
        throw new FsError('FS_IO_ERROR', `${what}: the path kept changing (symbolic links or directories were swapped) while in use`);
      }
      current = await resolveKey(ctx, current);
    }
  }
}
