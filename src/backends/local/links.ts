import { promises as nodeFsp } from 'node:fs';
import { FsError } from '../../seam/errors.js';
import type { FsTarget } from '../../seam/types.js';
import type { LocalContext } from './context.js';
import { inParent } from './dirs.js';
import { guard } from './errors.js';

export function symlink(ctx: LocalContext, target: FsTarget, linkText: string): Promise<void> {
  const what = `cannot create the link "${target.displayPath}"`;
  const key = target.targetKey;
  // Made in the anchored parent and never followed: the text may name anything, resolve checks it.
  return guard(what, () => ctx.lock.run(key, () => inParent(ctx, key, what, (anchor, name) => nodeFsp.symlink(linkText, anchor.child(name)))));
}

export function readlink(ctx: LocalContext, target: FsTarget): Promise<string> {
  const what = `cannot read the link "${target.displayPath}"`;
  return guard(what, () =>
    inParent(ctx, target.targetKey, what, async (anchor, name) => {
      const st = await ctx.fsp.lstat(anchor.child(name));
      if (!st.isSymbolicLink()) throw new FsError('FS_INVALID_ARGUMENT', `${what}: not a symbolic link`);
      return ctx.fsp.readlink(anchor.child(name));
    }),
  );
}

/** Whether the name is a link (undefined when nothing is there), never following it. */
async function isLink(ctx: LocalContext, path: string): Promise<boolean | undefined> {
  const st = await ctx.fsp.lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  return st === undefined ? undefined : st.isSymbolicLink();
}

/** K2 on disk: the link's own name is unlinked in its anchored parent, never followed. */
export function removeLink(ctx: LocalContext, target: FsTarget): Promise<void> {
  const what = `cannot remove the link "${target.displayPath}"`;
  const key = target.targetKey;
  return guard(what, () =>
    ctx.lock.run(key, () =>
      inParent(ctx, key, what, async (anchor, name) => {
        const link = await isLink(ctx, anchor.child(name));
        if (link === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
        if (!link) throw new FsError('FS_INVALID_ARGUMENT', `${what}: not a symbolic link`);
        await ctx.fsp.unlink(anchor.child(name));
        ctx.cache.delete(key);
      }),
    ),
  );
}

/**
 * K2 on disk: the link's name is renamed between anchored parents. A name created at `to` between
 * the check and the rename is replaced, as for `rename`.
 */
export function renameLink(ctx: LocalContext, from: FsTarget, to: FsTarget, replace: boolean): Promise<void> {
  const what = `cannot move the link "${from.displayPath}" to "${to.displayPath}"`;
  const [a, b] = [from.targetKey, to.targetKey].sort();
  const move = () =>
    inParent(ctx, from.targetKey, what, (src, fromName) =>
      inParent(ctx, to.targetKey, what, async (dst, toName) => {
        const link = await isLink(ctx, src.child(fromName));
        if (link === undefined) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
        if (!link) throw new FsError('FS_INVALID_ARGUMENT', `${what}: the source is not a symbolic link`);
        if (from.targetKey === to.targetKey) return;
        const there = await ctx.fsp.lstat(dst.child(toName)).catch(() => undefined);
        if (there !== undefined && !replace) throw new FsError('FS_ALREADY_EXISTS', `${what}: the destination exists`);
        if (there?.isDirectory()) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the destination is a directory`);
        await ctx.fsp.rename(src.child(fromName), dst.child(toName));
        ctx.cache.delete(from.targetKey);
        ctx.cache.delete(to.targetKey);
      }),
    );
  return guard(what, () => (a === b ? ctx.lock.run(a!, move) : ctx.lock.run(a!, () => ctx.lock.run(b!, move))));
}
