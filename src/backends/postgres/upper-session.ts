/**
 * How the upper store reaches its tables: reads on the shared connection, changes in a
 * transaction on the lock's connection (taking the lock first when nobody did), and the
 * revision that tells one process's saves from another's.
 */
import { FsError } from '../../seam/index.js';
import type { Q } from './client.js';
import { SANDBOXES } from './schema.js';
import type { UpperContext } from './upper-context.js';
import { acquire, unlock } from './upper-lock.js';

/** Statements outside a transaction, on the shared connection. */
export async function read<T>(ctx: UpperContext, what: string, fn: (q: Q) => Promise<T>): Promise<T> {
  await ctx.ready();
  return ctx.readDb.session(`${what} in ${ctx.where}`, undefined, fn);
}

/** The sandbox's revision now ('absent' when there is no sandbox). */
export function revisionNow(ctx: UpperContext): Promise<string> {
  return read(
    ctx,
    'cannot read the overlay state',
    async (q) => (await q(`SELECT revision::text AS r FROM ${SANDBOXES} WHERE sandbox = $1`, [ctx.sandbox]))[0]?.r ?? 'absent',
  );
}

/** A change in one transaction holding the sandbox's lock (the sandbox's row made first). */
export async function write(ctx: UpperContext, what: string, fn: (q: Q) => Promise<void>): Promise<void> {
  const full = `${what} in ${ctx.where}`;
  await ctx.ready();
  // The first change takes the lock when nobody called lock(): never two writers.
  if (ctx.held === undefined) {
    await acquire(ctx, {});
    const now = ctx.basis === undefined ? undefined : await revisionNow(ctx);
    if (now !== undefined && now !== ctx.basis) {
      await unlock(ctx);
      throw new FsError(
        'FS_CONFLICT',
        `${full}: another process changed the sandbox since this one last held its lock (revision ${ctx.basis}, now ${now}); open it again with a new store`,
      );
    }
  }
  if (ctx.held!.lost) throw new FsError('FS_IO_ERROR', `${full}: the connection holding the sandbox's lock was lost; open the sandbox again`);
  const h = ctx.held!;
  try {
    ctx.bumped = undefined;
    await h.db.transaction(full, undefined, async (q) => {
      await q(`INSERT INTO ${SANDBOXES} (sandbox) VALUES ($1) ON CONFLICT (sandbox) DO NOTHING`, [ctx.sandbox]);
      await fn(q);
    });
    if (ctx.bumped !== undefined) ctx.basis = ctx.bumped;
  } catch (err) {
    if (/no connection to PostgreSQL/.test((err as Error).message)) h.markLost();
    throw err;
  }
}

/** Inside a write: a new revision (this store's saves then become its basis). */
export async function bump(ctx: UpperContext, q: Q): Promise<void> {
  const rows = await q(`UPDATE ${SANDBOXES} SET revision = revision + 1 WHERE sandbox = $1 RETURNING revision::text AS r`, [ctx.sandbox]);
  ctx.bumped = rows[0]?.r;
}
