/**
 * The database connection as the provider uses it: statements on a session, transactions, abort
 * and error mapping. Accepts a `pg` Pool, a `pg` Client, an embedded PGlite, or anything with
 * `query(text, values)` returning `{ rows }`. No import of `pg` or PGlite: the caller brings one.
 */
import { FsError, KeyedMutex, throwIfAborted } from '../../seam/index.js';

/** Anything that runs one parameterised statement. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

/** A `pg` Pool: `connect()` hands out a dedicated client (with its backend's `processID`). */
export interface PoolLike extends PgQueryable {
  connect(): Promise<PoolConnection>;
  readonly totalCount: number;
}

export interface PoolConnection extends PgQueryable {
  release(destroy?: boolean | Error): void;
  processID?: number;
  on?(event: 'error', fn: (err: unknown) => void): unknown;
  removeListener?(event: 'error', fn: (err: unknown) => void): unknown;
}

/** PGlite: one embedded connection; `transaction` holds it exclusively. */
interface PGliteLike extends PgQueryable {
  transaction<T>(fn: (tx: PgQueryable) => Promise<T>): Promise<T>;
}

/** Runs one statement; `Q` is what a provider operation sees. */
export type Q = (text: string, values?: unknown[]) => Promise<any[]>;

export const isPool = (c: PgQueryable): c is PoolLike => typeof (c as PoolLike).connect === 'function' && 'totalCount' in c;
const isPGlite = (c: PgQueryable): c is PGliteLike => typeof (c as PGliteLike).transaction === 'function';

/** SQLSTATEs after which the whole step is tried again: serialization failures, deadlocks, and the constraint races of concurrent directory changes. */
export const RETRYABLE = new Set(['40001', '40P01', '23503', '23505']);
const MAX_ATTEMPTS = 8;

/** One queue per single `pg` Client, shared by every filesystem and store given that Client. */
const serials = new WeakMap<object, KeyedMutex>();

export class Db {
  /**
   * For a single `pg` Client: our statements and transactions must not interleave on its one
   * connection, whichever filesystem or store of this process they come from.
   */
  private readonly serial: KeyedMutex;

  constructor(readonly client: PgQueryable) {
    let serial = serials.get(client);
    if (serial === undefined) serials.set(client, (serial = new KeyedMutex()));
    this.serial = serial;
  }

  /** Whether sessions run at once, each on a connection of its own (a Pool of more than one). */
  get concurrent(): boolean {
    const c = this.client;
    return isPool(c) && (c as { options?: { max?: unknown } }).options?.max !== 1;
  }

  /** A sequence of statements outside a transaction (each one atomic). */
  session<T>(what: string, signal: AbortSignal | undefined, fn: (q: Q) => Promise<T>): Promise<T> {
    return this.run(what, signal, false, fn);
  }

  /**
   * A transaction (READ COMMITTED), retried whole on a serialization failure, a deadlock, or a
   * constraint race with a concurrent directory change (which the retry then sees and reports).
   */
  transaction<T>(what: string, signal: AbortSignal | undefined, fn: (q: Q) => Promise<T>): Promise<T> {
    return this.run(what, signal, true, fn);
  }

  private async run<T>(what: string, signal: AbortSignal | undefined, tx: boolean, fn: (q: Q) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      throwIfAborted(signal, what);
      try {
        return await this.once(what, signal, tx, fn);
      } catch (err) {
        const code = sqlState(err);
        if (!tx || code === undefined || !RETRYABLE.has(code) || attempt >= MAX_ATTEMPTS) throw pgError(err, what, signal);
      }
    }
  }

  private async once<T>(what: string, signal: AbortSignal | undefined, tx: boolean, fn: (q: Q) => Promise<T>): Promise<T> {
    const client = this.client;
    if (isPool(client)) {
      const connecting = client.connect();
      const conn = await abortable(connecting, signal, what).catch((err: unknown) => {
        // Aborted while waiting for a connection: hand it back to the pool once it comes.
        connecting.then((c) => c.release(), () => {});
        throw err;
      });
      let broken: unknown;
      // On abort the statement is cancelled on the server (best effort, through another connection
      // of the pool); the caller is answered at once either way. A cancel names the backend, not the
      // statement, and may arrive late: the connection is then not reused, or the cancel would end
      // whatever statement it runs next.
      const cancel = () => {
        if (conn.processID === undefined) return;
        broken ??= new Error('a cancel request was sent for this connection');
        client.query('SELECT pg_cancel_backend($1)', [conn.processID]).catch(() => {});
      };
      // A connection the server ends while it is checked out says so with an 'error' event, which
      // nobody else listens to then: it would be an uncaught exception.
      const onLost = (err: unknown) => (broken ??= err ?? new Error('connection lost'));
      signal?.addEventListener('abort', cancel, { once: true });
      conn.on?.('error', onLost);
      const q = statementRunner(conn, signal, what, (err) => (broken ??= isConnectionError(err) ? err : undefined));
      // Sent whatever the signal says; a connection whose transaction could not be ended is not reused.
      const rollback = async () => {
        if (broken === undefined) await conn.query('ROLLBACK').catch((err: unknown) => (broken ??= err ?? new Error('ROLLBACK failed')));
      };
      const work = (async () => {
        try {
          return await (tx ? inTransaction(q, fn, rollback) : fn(q));
        } finally {
          signal?.removeEventListener('abort', cancel);
          conn.removeListener?.('error', onLost);
          conn.release(broken === undefined ? undefined : true);
        }
      })();
      return abortable(work, signal, what);
    }
    if (isPGlite(client)) {
      // PGlite runs a statement to completion inside WebAssembly: it cannot be cancelled, only
      // not waited for; the signal is checked before every statement.
      const work = tx ? client.transaction((t) => fn(statementRunner(t, signal, what))) : fn(statementRunner(client, signal, what));
      return abortable(work, signal, what);
    }
    const q = statementRunner(client, signal, what);
    const rollback = () => client.query('ROLLBACK').then(() => {}, () => {});
    return abortable(this.serial.run('connection', () => (tx ? inTransaction(q, fn, rollback) : fn(q))), signal, what);
  }
}

/**
 * `fn` between BEGIN and COMMIT. On any failure, an abort included, `rollback` ends the
 * transaction: it must not check the signal, or an aborted call would hand back a connection
 * still inside a failed transaction.
 */
async function inTransaction<T>(q: Q, fn: (q: Q) => Promise<T>, rollback: () => Promise<void>): Promise<T> {
  await q('BEGIN');
  try {
    const result = await fn(q);
    await q('COMMIT');
    return result;
  } catch (err) {
    await rollback();
    throw err;
  }
}

function statementRunner(conn: PgQueryable, signal: AbortSignal | undefined, what: string, onError?: (err: unknown) => void): Q {
  return async (text, values) => {
    throwIfAborted(signal, what);
    try {
      const result = await conn.query(text, values);
      return result.rows;
    } catch (err) {
      onError?.(err);
      throw err;
    }
  };
}

/** Settles with `work`, or rejects with FS_ABORTED as soon as the signal fires. */
export function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new FsError('FS_ABORTED', `${what}: aborted`));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^(08|57P0)/.test(code)) return true;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return true; // ECONNRESET, ECONNREFUSED, EPIPE …
  const message = err instanceof Error ? err.message : '';
  return /Connection terminated|connection (?:is )?closed|Client has encountered a connection error|timeout/i.test(message);
}

/** Every database failure as an FsError naming its cause; FsErrors pass through. */
export function pgError(err: unknown, what: string, signal?: AbortSignal): FsError {
  if (err instanceof FsError) return err;
  const code = sqlState(err);
  const detail = err instanceof Error ? err.message : String(err);
  const cause = { cause: err };
  if (code === '57014') {
    if (signal?.aborted) return new FsError('FS_ABORTED', `${what}: aborted`, cause);
    return new FsError('FS_IO_ERROR', `${what}: PostgreSQL cancelled the statement (statement timeout or cancel request): ${detail}`, cause);
  }
  if (code === '25006') return new FsError('FS_READ_ONLY', `${what}: the database is read-only (a standby?): ${detail}`, cause);
  if (code === '42501') return new FsError('FS_PERMISSION_DENIED', `${what}: PostgreSQL refused access: ${detail}`, cause);
  if (code === '54000') return new FsError('FS_TOO_LARGE', `${what}: PostgreSQL limit exceeded: ${detail}`, cause);
  if (isConnectionError(err)) {
    return new FsError('FS_IO_ERROR', `${what}: no connection to PostgreSQL (connection lost or refused, ${code ?? (err as { code?: string }).code ?? 'no code'}): ${detail}`, cause);
  }
  if (signal?.aborted) return new FsError('FS_ABORTED', `${what}: aborted`, cause);
  return new FsError('FS_IO_ERROR', `${what}: PostgreSQL error${code ? ` ${code}` : ''}: ${detail}`, cause);
}

export { MAX_ATTEMPTS };
