/**
 * The sandbox's lock: a PostgreSQL session-level advisory lock, on a connection of its own with a
 * Pool, so that one process writes a sandbox at a time.
 */
import { FsError, throwIfAborted } from '../../seam/index.js';
import { Db, isPool, pgError, type PoolLike } from './client.js';
import type { HeldLock, SandboxLockOptions, UpperContext } from './upper-context.js';

/** Sandboxes held by this process, per client: a single connection (PGlite, a Client) re-enters its own advisory locks. */
const heldHere = new WeakMap<object, Set<string>>();

/** Takes the lock unless held (and not lost); concurrent calls share one attempt. */
export function acquire(ctx: UpperContext, options: SandboxLockOptions): Promise<void> {
  return (ctx.acquiring ??= acquireOnce(ctx, options).finally(() => (ctx.acquiring = undefined)));
}

/** Lets go of the lock (and its connection). A no-op when not held. */
export async function unlock(ctx: UpperContext): Promise<void> {
  const h = ctx.held;
  ctx.held = undefined;
  await h?.release();
}

async function acquireOnce(ctx: UpperContext, options: SandboxLockOptions): Promise<void> {
  if (ctx.held !== undefined && !ctx.held.lost) return;
  if (ctx.held !== undefined) await unlock(ctx);
  const what = `cannot lock ${ctx.where}`;
  await ctx.ready();
  const deadline = Date.now() + (options.timeoutMs ?? 0);
  let wait = 10;
  let told = false;
  for (;;) {
    throwIfAborted(options.signal, what);
    let got: HeldLock | undefined;
    try {
      got = await tryOnce(ctx);
    } catch (err) {
      throw pgError(err, what, options.signal);
    }
    if (got !== undefined) {
      ctx.held = got;
      return;
    }
    if (Date.now() >= deadline) {
      throw new FsError('FS_CONFLICT', `${ctx.where} is locked by ${await holderOf(ctx)}, which is using it; try again when it has finished`);
    }
    if (!told) {
      told = true;
      options.onWait?.(await holderOf(ctx));
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(wait, Math.max(1, deadline - Date.now()))));
    wait = Math.min(wait * 2, 200);
  }
}

/** One try at the lock: held, or undefined when someone (this process included) has it. */
async function tryOnce(ctx: UpperContext): Promise<HeldLock | undefined> {
  const { client, sandbox } = ctx;
  const mine = heldHere.get(client) ?? new Set<string>();
  heldHere.set(client, mine);
  if (mine.has(sandbox)) return undefined;
  if (isPool(client)) return tryOnPool(ctx, client, mine);
  const { rows } = await client.query('SELECT pg_try_advisory_lock($1::bigint) AS ok', [ctx.key]);
  if (rows[0]?.ok !== true) return undefined;
  mine.add(sandbox);
  const single: HeldLock = {
    db: ctx.readDb,
    lost: false,
    markLost() {
      single.lost = true;
    },
    async release() {
      mine.delete(sandbox);
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [ctx.key]).catch(() => {});
    },
  };
  return single;
}

/** With a Pool, the lock lives on a connection of its own, kept until it is let go. */
async function tryOnPool(ctx: UpperContext, client: PoolLike, mine: Set<string>): Promise<HeldLock | undefined> {
  const { sandbox, key } = ctx;
  const conn = await client.connect();
  let ok = false;
  try {
    const { rows } = await conn.query('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key]);
    ok = rows[0]?.ok === true;
  } finally {
    if (!ok) conn.release();
  }
  if (!ok) return undefined;
  mine.add(sandbox);
  let released = false;
  // Listened to while the lock is held only: the connection goes back to the pool, and serves
  // other locks, after.
  const onError = () => h.markLost();
  const h: HeldLock = {
    db: new Db(conn),
    lost: false,
    markLost() {
      h.lost = true;
      if (released) return;
      released = true;
      mine.delete(sandbox);
      conn.removeListener?.('error', onError);
      conn.release(true); // the lock went with the connection
    },
    async release() {
      if (released) return;
      released = true;
      mine.delete(sandbox);
      // Closing the connection would free the lock too; unlocking keeps it for the pool.
      const unlocked = await conn.query('SELECT pg_advisory_unlock($1::bigint)', [key]).then(() => true, () => false);
      conn.removeListener?.('error', onError);
      conn.release(unlocked ? undefined : true);
    },
  };
  conn.on?.('error', onError);
  return h;
}

/** What is known of the lock's holder, for a message. */
async function holderOf(ctx: UpperContext): Promise<string> {
  try {
    const big = BigInt(ctx.key);
    const classid = Number(BigInt.asUintN(32, big >> 32n));
    const objid = Number(BigInt.asUintN(32, big));
    const { rows } = await ctx.client.query(
      `SELECT l.pid, a.client_addr::text AS addr, a.application_name AS app FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = $1 AND l.objid::bigint = $2 AND l.objsubid = 1 LIMIT 1`,
      [classid, objid],
    );
    const r = rows[0];
    if (r === undefined) return 'another process';
    return `PostgreSQL backend ${r.pid}${r.addr ? ` (client ${r.addr}${r.app ? `, ${r.app}` : ''})` : ''}`;
  } catch {
    return 'another process';
  }
}
