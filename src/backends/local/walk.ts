import { readdirSync } from 'node:fs';
import { throwIfAborted } from '../../seam/errors.js';
import { depthFirst, narrowing } from '../../seam/fs-walk.js';
import { FsTargetKey, type FsTarget, type FsWalkEntry, type FsWalkOptions } from '../../seam/types.js';
import { openDirSync } from './anchor.js';
import type { LocalContext } from './context.js';
import { dirOpenError, mapError } from './errors.js';
import { childTarget, describeEntry } from './list.js';
import { withRedirects } from './resolve.js';
import { isTempName } from './temps.js';

/**
 * D4 natively: each directory is opened once through the anchored openDir (its real path
 * checked against the root on the descriptor), its entries read with their types through that
 * descriptor, and only what needs it is lstat'ed (files for their size, links to follow them);
 * a subdirectory is never lstat'ed. A directory swapped for a link after it was listed fails
 * openDir's check like any other access (outside the root: FS_OUTSIDE_ROOT; elsewhere: moved).
 */
export function walk(ctx: LocalContext, target: FsTarget, options: FsWalkOptions): AsyncGenerator<FsWalkEntry> {
  const { prune, onUnreadable } = options;
  const what = `cannot walk "${target.displayPath}"`;
  // The top as the walk found it (a link's key is where it leads): below it, real subdirectories only.
  const top: { targetKey: FsTarget['targetKey']; readonly displayPath: string } = { ...target };
  const list = async (dir: FsTarget, isTop: boolean, prefix: string): Promise<FsWalkEntry[]> => {
    if (!isTop) {
      try {
        return await listed(ctx, options, what, dir.targetKey, dir.displayPath, prefix);
      } catch (err) {
        throw mapError(err, `cannot list "${dir.displayPath}"`);
      }
    }
    try {
      return await withRedirects(ctx, target.targetKey, what, async (key) => {
        top.targetKey = FsTargetKey(key);
        return listed(ctx, options, what, key, target.displayPath, '');
      });
    } catch (err) {
      throw mapError(dirOpenError(err, what), what);
    }
  };
  return depthFirst(top, list, { ...(prune ? { prune } : {}), ...(onUnreadable ? { onUnreadable } : {}) });
}

/** One directory of a walk, its entries (in any order: the walk orders them), each with its path below the walked one. */
async function listed(
  ctx: LocalContext,
  { signal, wantsStats, narrow }: FsWalkOptions,
  what: string,
  key: string,
  displayDir: string,
  prefix: string,
): Promise<FsWalkEntry[]> {
  throwIfAborted(signal, what);
  const anchor = ctx.syncWalk ? openDirSync(key, ctx.root) : await ctx.openDir(key);
  try {
    const dirents = (
      ctx.syncWalk ? readdirSync(anchor.self, { withFileTypes: true }) : await ctx.fsp.readdir(anchor.self, { withFileTypes: true })
    ).filter((d) => !isTempName(d.name));
    const out: FsWalkEntry[] = [];
    const narrowed = narrowing(narrow);
    for (const d of dirents) {
      const name = d.name;
      if (d.isFile() && narrowed.leavesOut(name)) continue;
      const path = prefix === '' ? name : `${prefix}/${name}`;
      if (d.isDirectory() || d.isFile()) {
        const target = childTarget(key, displayDir, name);
        if (d.isDirectory() || wantsStats?.(path, name) === false) {
          out.push({ name, type: d.isDirectory() ? 'directory' : 'file', target, path });
          continue;
        }
      }
      const entry = await describeEntry(ctx, anchor, key, name, displayDir);
      if (entry !== undefined) out.push({ ...entry, path });
    }
    narrowed.report();
    return out;
  } finally {
    await anchor.close();
  }
}
