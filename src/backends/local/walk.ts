import { readdirSync } from 'node:fs';
import { throwIfAborted } from '../../seam/errors.js';
import { compareNames } from '../../seam/resolve.js';
import type { FsTarget, FsWalkEntry, FsWalkOptions } from '../../seam/types.js';
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
export async function* walk(ctx: LocalContext, target: FsTarget, options: FsWalkOptions): AsyncGenerator<FsWalkEntry> {
  const { prune, onUnreadable } = options;
  const what = `cannot walk "${target.displayPath}"`;
  let top: { key: string; entries: FsWalkEntry[] };
  try {
    top = await withRedirects(ctx, target.targetKey, what, async (key) => ({
      key,
      entries: await listed(ctx, options, what, key, target.displayPath, ''),
    }));
  } catch (err) {
    throw mapError(dirOpenError(err, what), what);
  }
  const stack = [{ entries: top.entries, next: 0 }];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const entry = frame.entries[frame.next++];
    if (entry === undefined) {
      stack.pop();
      continue;
    }
    yield entry;
    if (entry.type !== 'directory') continue;
    // A real subdirectory: its key is the lexical one (a link's is where it leads).
    const dirKey = top.key === '/' ? `/${entry.path}` : `${top.key}/${entry.path}`;
    if (entry.target.targetKey !== dirKey || prune?.(entry) === true) continue;
    let entries: FsWalkEntry[];
    try {
      entries = await listed(ctx, options, what, dirKey, entry.target.displayPath, entry.path);
    } catch (err) {
      const error = mapError(err, `cannot list "${entry.target.displayPath}"`);
      if (onUnreadable === undefined || error.code === 'FS_ABORTED') throw error;
      onUnreadable(entry, error);
      continue;
    }
    stack.push({ entries, next: 0 });
  }
}

/** One directory of a walk, its entries in order, each with its path below the walked one. */
async function listed(
  ctx: LocalContext,
  { signal, wantsStats }: FsWalkOptions,
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
    dirents.sort((a, b) => compareNames(a.name, b.name));
    const out: FsWalkEntry[] = [];
    for (const d of dirents) {
      const name = d.name;
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
    return out;
  } finally {
    await anchor.close();
  }
}
