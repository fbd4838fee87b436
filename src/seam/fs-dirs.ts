import { FsError, throwIfAborted } from './errors.js';
import { call } from './fs-call.js';
import type { FsContext } from './fs-context.js';
import { inListingOrder } from './listing.js';
import { describeType } from './path.js';
import type { FileSystem, FsListOptions, FsOpOptions, FsRmdirOptions, FsTarget } from './types.js';

/** Directories: listing one, creating one, removing one (never the root). */
export function createDirOps(ctx: FsContext): Pick<FileSystem, 'listDir' | 'mkdir' | 'rmdir'> {
  const { provider, rootGuard } = ctx;
  return {
    async listDir(target: FsTarget, opts?: FsListOptions) {
      ctx.checkTarget(target);
      const what = `cannot list "${target.displayPath}"`;
      const stats = opts?.stats ?? true;
      if (typeof stats !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `${what}: stats must be a boolean, got ${JSON.stringify(stats)}`);
      const entries = await call(what, opts?.signal, () => provider.listDir(target, { signal: opts?.signal, ...(stats ? {} : { stats }) }));
      throwIfAborted(opts?.signal, what);
      return inListingOrder(entries);
    },

    async mkdir(target: FsTarget, opts?: FsOpOptions): Promise<void> {
      ctx.checkTarget(target);
      const what = `cannot create directory "${target.displayPath}"`;
      await call(what, opts?.signal, () => provider.mkdir(target, { signal: opts?.signal }));
    },

    async rmdir(target: FsTarget, opts?: FsRmdirOptions): Promise<void> {
      ctx.checkTarget(target);
      const recursive = opts?.recursive ?? false;
      if (typeof recursive !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `recursive must be a boolean, got ${describeType(recursive)}`);
      const what = `cannot remove directory "${target.displayPath}"`;
      await call(what, opts?.signal, async () => {
        await rootGuard.refuse(what, 'it is the root', target);
        return provider.rmdir(target, { recursive, signal: opts?.signal });
      });
    },
  };
}
