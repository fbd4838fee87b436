import type { BigIntStats } from 'node:fs';
import { posix } from 'node:path';
import { FsError } from '../../seam/errors.js';
import { checkNotRoot, checkRename, type RenameSide } from '../../seam/swap.js';
import { FsVersion, type FsProviderRename, type FsTarget } from '../../seam/types.js';
import { Moved, type DirAnchor } from './anchor.js';
import type { LocalContext } from './context.js';
import { ensureDir, openParent, removeMade } from './dirs.js';
import { guard, isAbsent } from './errors.js';
import { hashLeaf, leafVersion, openLeaf } from './leaf.js';
import { withRedirects } from './resolve.js';

export function rename(ctx: LocalContext, from: FsTarget, to: FsTarget, options: FsProviderRename): Promise<void> {
  const { lock } = ctx;
  const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
  return guard(what, () =>
    withRedirects(ctx, from.targetKey, what, (fromKey) =>
      withRedirects(ctx, to.targetKey, what, (toKey) => {
        const [first, second] = [fromKey, toKey].sort();
        const move = () => renameLocked(ctx, fromKey, toKey, options, what);
        return first === second ? lock.run(first!, move) : lock.run(first!, () => lock.run(second!, move));
      }),
    ),
  );
}

/** What a name in an anchored directory is, for rename's checks; a link planted meanwhile is Moved. */
async function renameSide(ctx: LocalContext, anchor: DirAnchor | undefined, key: string, needVersion: boolean, what: string): Promise<RenameSide | undefined> {
  if (anchor === undefined) return undefined;
  const name = posix.basename(key);
  let st: BigIntStats;
  try {
    st = await ctx.fsp.lstat(anchor.child(name), { bigint: true });
  } catch (err) {
    if (isAbsent(err)) return undefined;
    throw err;
  }
  if (st.isSymbolicLink()) throw new Moved(key);
  if (st.isDirectory()) {
    const dir = await ctx.openDir(key);
    try {
      return { type: 'directory', empty: (await ctx.fsp.readdir(dir.self)).length === 0 };
    } finally {
      await dir.close();
    }
  }
  if (!st.isFile()) return { type: 'other' };
  if (!needVersion) return { type: 'file' };
  const leaf = await openLeaf(ctx, anchor, name, key, what);
  if (leaf === undefined) return undefined;
  try {
    return { type: 'file', version: await leafVersion(ctx, leaf, key, what) };
  } finally {
    await leaf.handle.close().catch(() => undefined);
  }
}

async function renameLocked(ctx: LocalContext, from: string, to: string, options: FsProviderRename, what: string): Promise<void> {
  const { fsp, cache } = ctx;
  checkNotRoot(what, ctx.root, from, to);
  const source = await openParent(ctx, from);
  if (source === undefined) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
  const made: string[] = [];
  let dest: DirAnchor | undefined;
  let moved = false;
  try {
    const src = await renameSide(ctx, source, from, options.expect !== undefined, what);
    dest = await openParent(ctx, to);
    const dst = await renameSide(ctx, dest, to, typeof options.replace === 'string', what);
    const replacing = checkRename(what, src, dst, options);
    dest ??= await ensureDir(ctx, posix.dirname(to), what, made);
    const [fromName, toName] = [posix.basename(from), posix.basename(to)];
    if (options.expect !== undefined) await recheckSource(ctx, source, fromName, from, options.expect, what);
    if (replacing === 'none') {
      // D3 wants one atomic rename (link + unlink would show both names for a moment), so a
      // name another process creates in the instant since the check above is replaced.
      const raced = await fsp.lstat(dest.child(toName)).then(() => true, () => false);
      if (raced) throw new FsError('FS_ALREADY_EXISTS', `${what}: the destination was created meanwhile`);
    }
    await fsp.rename(source.child(fromName), dest.child(toName));
    moved = true;
    cache.delete(from);
    cache.delete(to);
    if (ctx.durable) {
      await dest.handle.sync();
      if (dest.path !== source.path) await source.handle.sync();
    }
  } catch (err) {
    if (!moved) await removeMade(ctx, made);
    throw err;
  } finally {
    await source.close();
    await dest?.close();
  }
}

/** As publish does: narrow the window for writers that do not take this lock. */
async function recheckSource(ctx: LocalContext, source: DirAnchor, name: string, key: string, expect: FsVersion, what: string): Promise<void> {
  const leaf = await openLeaf(ctx, source, name, key, what);
  if (leaf === undefined) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
  try {
    const { version } = await hashLeaf(leaf, what);
    if (version !== expect) throw new FsError('FS_STALE_VERSION', `${what}: the source changed since it was read`);
  } finally {
    await leaf.handle.close().catch(() => undefined);
  }
}
