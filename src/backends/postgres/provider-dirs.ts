/** The provider's `mkdir` and `rmdir`: directories are rows, kept whole by the table's foreign key. */
import { FsError, checkRmdir, type FsOpOptions, type FsTarget } from '../../seam/index.js';
import { MAX_ATTEMPTS, sqlState } from './client.js';
import type { PgContext } from './provider-context.js';
import { dirsBetween, ensureDirs, subtree } from './rows.js';
import { ENTRIES } from './schema.js';

export async function mkdir(ctx: PgContext, target: FsTarget, { signal }: FsOpOptions): Promise<void> {
  await ctx.ready(signal);
  const what = `cannot create directory "${target.displayPath}"`;
  const { root } = ctx;
  await ctx.db.session(what, signal, (q) => ensureDirs(q, ctx.ws, [...dirsBetween(root, target.targetKey), ...(target.targetKey === root ? [] : [target.targetKey])], what));
}

export async function rmdir(ctx: PgContext, target: FsTarget, { recursive, signal }: FsOpOptions & { readonly recursive: boolean }): Promise<void> {
  await ctx.ready(signal);
  const what = `cannot remove directory "${target.displayPath}"`;
  const { ws } = ctx;
  const key = target.targetKey;
  const { prefix, upper } = subtree(key);
  await ctx.db.session(what, signal, async (q) => {
    for (let attempt = 1; ; attempt++) {
      const rows = await q(
        `SELECT kind, (SELECT count(*)::int FROM ${ENTRIES} c WHERE c.workspace = $1 AND c.parent = $2) AS n
         FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`,
        [ws, key],
      );
      const row = rows[0];
      if (row === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (row.kind !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
      checkRmdir(what, row.n, recursive);
      try {
        if (recursive) {
          await q(`DELETE FROM ${ENTRIES} WHERE workspace = $1 AND path >= $2 AND path < $4 AND (path = $2 OR path >= $3)`, [ws, key, prefix, upper]);
        } else {
          await q(`DELETE FROM ${ENTRIES} WHERE workspace = $1 AND path = $2 AND kind = 'directory'`, [ws, key]);
        }
        return;
      } catch (err) {
        // The foreign key refused: an entry was created inside meanwhile.
        if (sqlState(err) !== '23503' || attempt >= MAX_ATTEMPTS) throw err;
        if (!recursive) checkRmdir(what, 1, false);
      }
    }
  });
}
