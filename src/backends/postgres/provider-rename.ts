/** The provider's `rename` (D3): a file or a whole directory moved in one transaction. */
import { FsVersion, checkRename, type FsProviderRename, type FsTarget, type RenameSide } from '../../seam/index.js';
import type { PgContext } from './provider-context.js';
import { ENSURE_DIRS, dirsBetween, notDirectory, parentOf, subtree } from './rows.js';
import { ENTRIES } from './schema.js';

export async function rename(ctx: PgContext, from: FsTarget, to: FsTarget, options: FsProviderRename): Promise<void> {
  await ctx.ready(options.signal);
  const { ws, root } = ctx;
  const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
  const src = from.targetKey;
  const dst = to.targetKey;
  const { prefix, upper } = subtree(src);
  // One transaction: both names locked, checked by the seam's rules, the destination cleared,
  // and the source with everything below it moved in one UPDATE (D3).
  await ctx.db.transaction(what, options.signal, async (q) => {
    const rows = await q(
      `SELECT e.path, e.kind, e.version,
         EXISTS (SELECT 1 FROM ${ENTRIES} c WHERE c.workspace = e.workspace AND c.parent = e.path) AS nonempty
       FROM ${ENTRIES} e WHERE e.workspace = $1 AND e.path = ANY($2::text[]) FOR UPDATE OF e`,
      [ws, [src, dst]],
    );
    const side = (key: string): RenameSide | undefined => {
      const r = rows.find((x) => x.path === key);
      if (r === undefined) return undefined;
      if (r.kind === 'file') return { type: 'file', version: FsVersion(r.version) };
      if (r.kind === 'directory') return { type: 'directory', empty: !r.nonempty };
      return { type: 'other' };
    };
    const replacing = checkRename(what, side(src), side(dst), options);
    if (replacing === 'none') {
      const dirs = dirsBetween(root, dst);
      if (dirs.length > 0) {
        const bad = await q(`WITH ${ENSURE_DIRS} SELECT path, kind FROM bad`, [ws, dirs, dirs.map(parentOf)]);
        if (bad.length > 0) throw notDirectory(what, bad[0]);
      }
    } else {
      await q(`DELETE FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`, [ws, dst]);
    }
    await q(
      `UPDATE ${ENTRIES} SET
         path = $3 || substr(path, $5),
         parent = CASE WHEN path = $2 THEN $4 ELSE $3 || substr(parent, $5) END
       WHERE workspace = $1 AND path >= $2 AND path < $7 AND (path = $2 OR path >= $6)`,
      [ws, src, dst, parentOf(dst), [...src].length + 1, prefix, upper],
    );
  });
}
