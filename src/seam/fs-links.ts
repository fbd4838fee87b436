import { FsError } from './errors.js';
import { call, dueToYield, yieldToTimers } from './fs-call.js';
import type { FsContext } from './fs-context.js';
import { createLinkOps } from './links.js';
import { createSetExecutable } from './modes.js';
import type { FileSystem, FsLinkRenameOptions, FsOpOptions, FsTarget } from './types.js';

type LinkAndModeOps = Pick<FileSystem, 'setExecutable' | 'symlink' | 'readlink' | 'removeLink' | 'renameLink'>;

/** X1, K1 and K2 as the filesystem offers them: targets checked here, the rest in modes.ts and links.ts. */
export function createLinkAndModeOps(ctx: FsContext): LinkAndModeOps {
  const { rootGuard } = ctx;
  const setExecutable = createSetExecutable(ctx.provider, ctx.locks);
  const links = createLinkOps(ctx.provider, ctx.locks);
  return {
    async setExecutable(target: FsTarget, executable: boolean, opts?: FsOpOptions): Promise<void> {
      ctx.checkTarget(target);
      if (dueToYield()) await yieldToTimers();
      return setExecutable(target, executable, opts);
    },

    async symlink(target: FsTarget, linkText: string, opts?: FsOpOptions): Promise<void> {
      ctx.checkTarget(target);
      const what = `cannot create the link "${target.displayPath}"`;
      if (await call(what, opts?.signal, () => rootGuard.is(target))) throw new FsError('FS_ALREADY_EXISTS', `${what}: it is the root`);
      return links.symlink(target, linkText, opts);
    },

    async readlink(target: FsTarget, opts?: FsOpOptions): Promise<string> {
      ctx.checkTarget(target);
      return links.readlink(target, opts);
    },

    async removeLink(target: FsTarget, opts?: FsOpOptions): Promise<void> {
      ctx.checkTarget(target);
      await call(`cannot remove the link "${target.displayPath}"`, opts?.signal, () => rootGuard.refuse(`cannot remove the link "${target.displayPath}"`, 'it is the root', target));
      return links.removeLink(target, opts);
    },

    async renameLink(from: FsTarget, to: FsTarget, opts?: FsLinkRenameOptions): Promise<void> {
      ctx.checkTarget(from);
      ctx.checkTarget(to);
      const what = `cannot move the link "${from.displayPath}" to "${to.displayPath}"`;
      await call(what, opts?.signal, () => rootGuard.refuse(what, 'the root cannot be moved or replaced', from, to));
      return links.renameLink(from, to, opts);
    },
  };
}
