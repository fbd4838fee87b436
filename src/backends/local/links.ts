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
