/** How the upper store reaches its tables: reads in a read transaction, changes in a write transaction holding the lock. */
import { FsError } from '../../seam/errors.js';
import type { Sql } from './db.js';
import { SANDBOXES } from './schema.js';
import type { UpperContext } from './upper-context.js';
import { claim } from './upper-lock.js';

/** A read in one transaction. */
export function read<T>(ctx: UpperContext, what: string, fn: (sql: Sql) => T): Promise<T> {
  return ctx.db.transaction(`${what} in ${ctx.where}`, fn, { readOnly: true });
}

/** The revision now ('absent' when the sandbox has no row). */
export const revisionOf = (ctx: UpperContext, sql: Sql): string => {
  const row = sql.get(`SELECT revision FROM ${SANDBOXES} WHERE sandbox = ?`, [ctx.sandbox]);
  return row === undefined ? 'absent' : String(row.revision);
};

/**
 * A change in one write transaction holding the sandbox's lock (taken there when this store does
 * not hold it yet, refused when another store does). `fn` returns true when the change moves the
 * revision on (the state document or the journal changed).
 */
export async function write(ctx: UpperContext, what: string, fn: (sql: Sql) => boolean | void): Promise<void> {
  const full = `${what} in ${ctx.where}`;
  const revision = await ctx.db.transaction(full, (sql) => {
    const busy = claim(ctx, sql, full, true);
    if (busy !== undefined) throw new FsError('FS_CONFLICT', `${full}: the sandbox is locked by ${busy}`);
    if (fn(sql) !== true) return undefined;
    sql.run(`UPDATE ${SANDBOXES} SET revision = revision + 1 WHERE sandbox = ?`, [ctx.sandbox]);
    return revisionOf(ctx, sql);
  }, { durable: true });
  ctx.held = true;
  if (revision !== undefined) ctx.basis = revision;
}
