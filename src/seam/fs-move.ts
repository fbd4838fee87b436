import { FsError } from './errors.js';
import { call } from './fs-call.js';
import { checkIntent } from './fs-checks.js';
import type { FsContext } from './fs-context.js';
import type { FileSystem, FsRenameOptions, FsTarget } from './types.js';

/** rename: both names locked, the root never moved or replaced, a directory never moved into itself. */
export function createRename(ctx: FsContext, fs: () => FileSystem): FileSystem['rename'] {
  const { provider, locks, rootGuard } = ctx;
  return async function rename(from: FsTarget, to: FsTarget, opts?: FsRenameOptions): Promise<void> {
    ctx.checkTarget(from);
    ctx.checkTarget(to);
    const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
    const expect = opts?.expect;
    if (expect !== undefined) checkIntent({ kind: 'replaceIfVersion', version: expect }, false);
    const replace = opts?.replace ?? false;
    if (typeof replace !== 'boolean') checkIntent({ kind: 'replaceIfVersion', version: replace }, false);
    const signal = opts?.signal;
    // Both names are held, in one order, so two opposite renames cannot deadlock (one name: once).
    const [first, second] = [from.targetKey, to.targetKey].sort();
    const both = <T>(fn: () => Promise<T>) => (first === second ? locks.run(first!, fn) : locks.run(first!, () => locks.run(second!, fn)));
    await call(what, signal, async () => {
      await rootGuard.refuse(what, 'the root cannot be moved or replaced', from, to);
      if (from.targetKey !== to.targetKey && fs().contains(from, to)) {
        throw new FsError('FS_INVALID_ARGUMENT', `${what}: a directory cannot be moved inside itself`);
      }
      return both(async () => {
        if (from.targetKey !== to.targetKey) {
          return provider.rename(from, to, { ...(expect === undefined ? {} : { expect }), replace, signal });
        }
        // A move onto itself changes nothing, but its guard and existence still count.
        const info = await provider.stat(from, { signal });
        if (info === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
        if (expect !== undefined && info.version !== expect) throw new FsError('FS_STALE_VERSION', `${what}: the file changed since it was read`);
      });
    });
  };
}
