/** The provider's link operations (K1): each one statement of links.ts, once the workspace is ready. */
import type { FsOpOptions, FsTarget } from '../../seam/index.js';
import { deleteLink, insertLink, moveLink, readLink } from './links.js';
import type { PgContext } from './provider-context.js';

export async function symlink(ctx: PgContext, target: FsTarget, linkText: string, { signal }: FsOpOptions): Promise<void> {
  await ctx.ready(signal);
  const what = `cannot create the link "${target.displayPath}"`;
  await ctx.db.session(what, signal, (q) => insertLink(q, ctx.ws, target.targetKey, linkText, what));
}

export async function readlink(ctx: PgContext, target: FsTarget, { signal }: FsOpOptions): Promise<string> {
  await ctx.ready(signal);
  const what = `cannot read the link "${target.displayPath}"`;
  return ctx.db.session(what, signal, (q) => readLink(q, ctx.ws, target.targetKey, what));
}

export async function removeLink(ctx: PgContext, target: FsTarget, { signal }: FsOpOptions): Promise<void> {
  await ctx.ready(signal);
  const what = `cannot remove the link "${target.displayPath}"`;
  await ctx.db.session(what, signal, (q) => deleteLink(q, ctx.ws, target.targetKey, what));
}

export async function renameLink(ctx: PgContext, from: FsTarget, to: FsTarget, { replace, signal }: FsOpOptions & { readonly replace: boolean }): Promise<void> {
  await ctx.ready(signal);
  const what = `cannot move the link "${from.displayPath}" to "${to.displayPath}"`;
  await ctx.db.transaction(what, signal, (q) => moveLink(q, ctx.ws, from.targetKey, to.targetKey, replace, what));
}
