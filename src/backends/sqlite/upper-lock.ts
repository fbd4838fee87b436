/**
 * The sandbox's writer lock, kept in its row: who holds it (process, host, a token per store).
 * A holder whose process is gone (on this host) is taken over; one alive is waited for or refused.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { FsError, throwIfAborted } from '../../seam/errors.js';
import type { Sql } from './db.js';
import { SANDBOXES } from './schema.js';
import type { UpperContext } from './upper-context.js';

export interface SandboxLockOptions {
  /** How long to wait for another holder to let go (default 0: try once). Then `FS_CONFLICT`. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Called once when the lock is busy, with what is known of the holder. */
  readonly onWait?: (holder: string) => void;
}

interface Holder {
  readonly pid: number;
  readonly host: string;
  readonly token: string;
}

/** This store's holder record (a JSON text, compared whole). */
export function newHolder(): string {
  return JSON.stringify({ pid: process.pid, host: hostname(), token: randomBytes(12).toString('hex') } satisfies Holder);
}

/** The holder now, described for a message, or undefined when nobody alive holds the lock (or this store does). */
export function otherHolder(ctx: UpperContext, text: unknown): string | undefined {
  if (typeof text !== 'string' || text === ctx.me) return undefined;
  let holder: Partial<Holder>;
  try {
    holder = JSON.parse(text) as Partial<Holder>;
  } catch {
    return undefined;
  }
  if (holder.host === hostname() && typeof holder.pid === 'number' && !alive(holder.pid)) return undefined;
  return `process ${holder.pid} on ${holder.host}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: unknown }).code === 'EPERM';
  }
}

/**
 * Inside a write transaction: makes this store the holder, or says who holds the lock. The row is
 * made when missing. `stale` is the revision check of a write that takes the lock by itself.
 */
export function claim(ctx: UpperContext, sql: Sql, full: string, checkStale: boolean): string | undefined {
  const row = sql.get(`SELECT holder, revision FROM ${SANDBOXES} WHERE sandbox = ?`, [ctx.sandbox]);
  if (row !== undefined && row.holder === ctx.me) return undefined;
  if (ctx.held) throw new FsError('FS_CONFLICT', `${full}: another process took the sandbox's lock from this store; open the sandbox again`);
  const busy = row === undefined ? undefined : otherHolder(ctx, row.holder);
  if (busy !== undefined) return busy;
  const now = row === undefined ? 'absent' : String(row.revision);
  if (checkStale && ctx.basis !== undefined && now !== ctx.basis) {
    throw new FsError(
      'FS_CONFLICT',
      `${full}: another process changed the sandbox since this one last held its lock (revision ${ctx.basis}, now ${now}); open it again with a new store`,
    );
  }
  if (row === undefined) sql.run(`INSERT INTO ${SANDBOXES} (sandbox, holder) VALUES (?, ?)`, [ctx.sandbox, ctx.me]);
  else sql.run(`UPDATE ${SANDBOXES} SET holder = ? WHERE sandbox = ?`, [ctx.me, ctx.sandbox]);
  return undefined;
}

/** Takes the lock, waiting up to `timeoutMs` for another holder; then FS_CONFLICT naming it. */
export async function acquire(ctx: UpperContext, options: SandboxLockOptions): Promise<void> {
  const what = `cannot lock ${ctx.where}`;
  const deadline = Date.now() + (options.timeoutMs ?? 0);
  let told = false;
  for (;;) {
    throwIfAborted(options.signal, what);
    const busy = await ctx.db.transaction(what, (sql) => claim(ctx, sql, what, false));
    if (busy === undefined) {
      ctx.held = true;
      return;
    }
    if (Date.now() >= deadline) throw new FsError('FS_CONFLICT', `${what}: it is locked by ${busy}`);
    if (!told) options.onWait?.(busy);
    told = true;
    await delay(Math.min(50, Math.max(1, deadline - Date.now())));
  }
}

/** Lets go of the lock, when this store holds it. */
export async function release(ctx: UpperContext): Promise<void> {
  if (!ctx.held) return;
  ctx.held = false;
  await ctx.db.transaction(`cannot unlock ${ctx.where}`, (sql) =>
    sql.run(`UPDATE ${SANDBOXES} SET holder = NULL WHERE sandbox = ? AND holder = ?`, [ctx.sandbox, ctx.me]),
  );
}
