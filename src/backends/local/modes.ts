import { posix } from 'node:path';
import { FsError } from '../../seam/errors.js';
import { withExecutable } from '../../seam/modes.js';
import type { FsTarget } from '../../seam/types.js';
import type { LocalContext } from './context.js';
import { openParent } from './dirs.js';
import { guard, notFound } from './errors.js';
import { openLeaf } from './leaf.js';
import { withRedirects } from './resolve.js';

export function setExecutable(ctx: LocalContext, target: FsTarget, executable: boolean): Promise<void> {
  const what = `cannot change the mode of "${target.displayPath}"`;
  return guard(what, () =>
    withRedirects(ctx, target.targetKey, what, (key) =>
      // Under the swap lock: a write copies the old mode onto its new file, and must see this one.
      ctx.lock.run(key, async () => {
        if (key === ctx.root) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file (a directory)`);
        const anchor = await openParent(ctx, key);
        if (anchor === undefined) throw notFound(what);
        try {
          const leaf = await openLeaf(ctx, anchor, posix.basename(key), key, what);
          if (leaf === undefined) throw notFound(what);
          try {
            await leaf.handle.chmod(withExecutable(Number(leaf.st.mode & 0o7777n), executable));
          } finally {
            await leaf.handle.close().catch(() => undefined);
          }
        } finally {
          await anchor.close();
        }
      }),
    ),
  );
}
