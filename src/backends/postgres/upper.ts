/**
 * An overlay's upper layer kept in PostgreSQL (the overlay's UpperStore seam): a sandbox started
 * on one host can be reviewed and committed from another. One writer per sandbox at a time,
 * enforced with a session-level advisory lock.
 */
import { createHash } from 'node:crypto';
import { FsError, KeyedMutex, throwIfAborted } from '../../seam/index.js';
import type { UpperStore } from '../overlay/store.js';
import { Db, pgError, type PgQueryable, type Q } from './client.js';
import { SANDBOXES, SANDBOX_BLOBS, SANDBOX_JOURNAL, ensureSchema } from './schema.js';

export interface PostgresUpperStoreOptions {
  /** As for createPostgresFs: a `pg` Pool (recommended), a `pg` Client, or PGlite. */
  readonly client: PgQueryable;
  /** The sandbox's name; many sandboxes share the tables. */
  readonly sandbox: string;
}

export interface SandboxLockOptions {
  /** How long to wait for another holder to let go (default 0: try once). Then `FS_CONFLICT`. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Called once when the lock is busy, with what is known of the holder. */
  readonly onWait?: (holder: string) => void;
}

export interface PostgresUpperStore extends UpperStore {
  readonly sandbox: string;
  /** Whether this store holds the sandbox's lock now. */
  readonly locked: boolean;
  /**
   * Takes the sandbox's lock (a PostgreSQL session-level advisory lock, on a connection of its
   * own with a Pool). Held elsewhere past `timeoutMs`: `FS_CONFLICT`. A no-op when already held.
   */
  lock(options?: SandboxLockOptions): Promise<void>;
  /** Lets go of the lock (and its connection). A no-op when not held. */
  unlock(): Promise<void>;
  /** Runs `fn` holding the lock (taken and let go around it unless already held), one call at a time. */
  withLock<T>(fn: () => Promise<T>, options?: SandboxLockOptions): Promise<T>;
  /** Whether the sandbox has a saved state. */
  exists(): Promise<boolean>;
  /** Changes whenever the state document or journal changes ('absent' when there is no sandbox). */
  revision(): Promise<string>;
  /** Deletes the sandbox and everything it holds (takes the lock first, without waiting). */
  drop(): Promise<void>;
}

interface PoolLike extends PgQueryable {
  connect(): Promise<PgQueryable & { release(destroy?: boolean | Error): void; on?(event: 'error', fn: (err: unknown) => void): unknown }>;
  readonly totalCount: number;
}
const isPool = (c: PgQueryable): c is PoolLike => typeof (c as PoolLike).connect === 'function' && 'totalCount' in c;

/** Sandboxes held by this process, per client: a single connection (PGlite, a Client) re-enters its own advisory locks. */
const heldHere = new WeakMap<object, Set<string>>();

/** The advisory lock's key: 64 bits of a digest of the name (the schema lock is a small constant). */
export function sandboxLockKey(sandbox: string): string {
  const digest = createHash('sha256').update('dsh-fs sandbox\0').update(sandbox).digest();
  return digest.readBigInt64BE(0).toString();
}

export function createPostgresUpperStore(options: PostgresUpperStoreOptions): PostgresUpperStore {
  const { client, sandbox } = options;
  if (typeof sandbox !== 'string' || sandbox.length === 0) throw new FsError('FS_INVALID_ARGUMENT', 'sandbox must be a non-empty string');
  if (typeof client?.query !== 'function') throw new FsError('FS_INVALID_ARGUMENT', 'client must have a query(text, values) method');
  const where = `PostgreSQL sandbox "${sandbox}"`;
  const key = sandboxLockKey(sandbox);
  const readDb = new Db(client);
  const serial = new KeyedMutex();

  let schema: Promise<void> | undefined;
  const ready = () =>
    (schema ??= ensureSchema(readDb).catch((err) => {
      schema = undefined;
      throw err;
    }));

  /** While locked: where writes go (the lock's own connection, so a lost connection cannot write unlocked). */
  let held: { db: Db; release(): Promise<void>; markLost(): void; lost: boolean } | undefined;

  const read = async <T>(what: string, fn: (q: Q) => Promise<T>): Promise<T> => {
    await ready();
    return readDb.session(`${what} in ${where}`, undefined, fn);
  };

  /**
   * The sandbox's revision as this store last knew it (its first read of the state, its own
   * saves, an explicit lock). A change that takes the lock by itself compares: another process
   * saved since, so what this process holds in memory is stale and must not be saved over it.
   */
  let basis: string | undefined;
  let bumped: string | undefined;
  const revisionNow = () =>
    read('cannot read the overlay state', async (q) => (await q(`SELECT revision::text AS r FROM ${SANDBOXES} WHERE sandbox = $1`, [sandbox]))[0]?.r ?? 'absent');

  const write = async (what: string, fn: (q: Q) => Promise<void>): Promise<void> => {
    const full = `${what} in ${where}`;
    await ready();
    // The first change takes the lock when nobody called lock(): never two writers.
    if (held === undefined) {
      await acquire({});
      const now = basis === undefined ? undefined : await revisionNow();
      if (now !== undefined && now !== basis) {
        await unlock();
        throw new FsError(
          'FS_CONFLICT',
          `${full}: another process changed the sandbox since this one last held its lock (revision ${basis}, now ${now}); open it again with a new store`,
        );
      }
    }
    if (held!.lost) throw new FsError('FS_IO_ERROR', `${full}: the connection holding the sandbox's lock was lost; open the sandbox again`);
    const h = held!;
    try {
      bumped = undefined;
      await h.db.transaction(full, undefined, async (q) => {
        await q(`INSERT INTO ${SANDBOXES} (sandbox) VALUES ($1) ON CONFLICT (sandbox) DO NOTHING`, [sandbox]);
        await fn(q);
      });
      if (bumped !== undefined) basis = bumped;
    } catch (err) {
      if (/no connection to PostgreSQL/.test((err as Error).message)) h.markLost();
      throw err;
    }
  };

  const bump = async (q: Q) => {
    const rows = await q(`UPDATE ${SANDBOXES} SET revision = revision + 1 WHERE sandbox = $1 RETURNING revision::text AS r`, [sandbox]);
    bumped = rows[0]?.r;
  };

  async function holderOf(): Promise<string> {
    try {
      const big = BigInt(key);
      const classid = Number(BigInt.asUintN(32, big >> 32n));
      const objid = Number(BigInt.asUintN(32, big));
      const { rows } = await client.query(
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

  async function tryOnce(): Promise<typeof held | undefined> {
    const mine = heldHere.get(client) ?? new Set<string>();
    heldHere.set(client, mine);
    if (mine.has(sandbox)) return undefined;
    if (isPool(client)) {
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
      const h = {
        db: new Db(conn),
        lost: false,
        markLost() {
          h.lost = true;
          if (released) return;
          released = true;
          mine.delete(sandbox);
          conn.release(true); // the lock went with the connection
        },
        async release() {
          if (released) return;
          released = true;
          mine.delete(sandbox);
          // Closing the connection would free the lock too; unlocking keeps it for the pool.
          const unlocked = await conn.query('SELECT pg_advisory_unlock($1::bigint)', [key]).then(() => true, () => false);
          conn.release(unlocked ? undefined : true);
        },
      };
      conn.on?.('error', () => h.markLost());
      return h;
    }
    const { rows } = await client.query('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key]);
    if (rows[0]?.ok !== true) return undefined;
    mine.add(sandbox);
    const single = {
      db: readDb,
      lost: false,
      markLost() {
        single.lost = true;
      },
      async release() {
        mine.delete(sandbox);
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => {});
      },
    };
    return single;
  }

  // Concurrent first writes share one attempt.
  let acquiring: Promise<void> | undefined;
  function acquire(options: SandboxLockOptions): Promise<void> {
    return (acquiring ??= acquireOnce(options).finally(() => (acquiring = undefined)));
  }

  async function acquireOnce(options: SandboxLockOptions): Promise<void> {
    if (held !== undefined && !held.lost) return;
    if (held !== undefined) await unlock();
    const what = `cannot lock ${where}`;
    await ready();
    const deadline = Date.now() + (options.timeoutMs ?? 0);
    let wait = 10;
    let told = false;
    for (;;) {
      throwIfAborted(options.signal, what);
      let got: typeof held;
      try {
        got = await tryOnce();
      } catch (err) {
        throw pgError(err, what, options.signal);
      }
      if (got !== undefined) {
        held = got;
        return;
      }
      if (Date.now() >= deadline) {
        throw new FsError('FS_CONFLICT', `${where} is locked by ${await holderOf()}, which is using it; try again when it has finished`);
      }
      if (!told) {
        told = true;
        options.onWait?.(await holderOf());
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, Math.max(1, deadline - Date.now()))));
      wait = Math.min(wait * 2, 200);
    }
  }

  async function unlock(): Promise<void> {
    const h = held;
    held = undefined;
    await h?.release();
  }

  const store: PostgresUpperStore = {
    where,
    sandbox,
    get locked() {
      return held !== undefined && !held.lost;
    },
    lock: async (options = {}) => {
      await acquire(options);
      // Whoever takes the lock explicitly reloads what changed (as the CLI does by revision).
      basis = await revisionNow();
    },
    unlock,
    withLock: (fn, options = {}) =>
      serial.run('', async () => {
        if (held !== undefined && !held.lost) return fn();
        await acquire(options);
        basis = await revisionNow();
        try {
          return await fn();
        } finally {
          await unlock();
        }
      }),
    exists: () => read('cannot read the overlay state', async (q) => (await q(`SELECT 1 FROM ${SANDBOXES} WHERE sandbox = $1 AND state IS NOT NULL`, [sandbox])).length > 0),
    revision: () =>
      read('cannot read the overlay state', async (q) => {
        const rows = await q(`SELECT revision::text AS r FROM ${SANDBOXES} WHERE sandbox = $1`, [sandbox]);
        return rows[0]?.r ?? 'absent';
      }),
    drop: async () => {
      await write('cannot delete the sandbox', async (q) => void (await q(`DELETE FROM ${SANDBOXES} WHERE sandbox = $1`, [sandbox])));
    },
    readState: () =>
      read('cannot read the overlay state', async (q) => {
        const rows = await q(`SELECT state, revision::text AS r FROM ${SANDBOXES} WHERE sandbox = $1`, [sandbox]);
        basis ??= rows[0]?.r ?? 'absent';
        return rows[0]?.state == null ? undefined : bytesOf(rows[0].state);
      }),
    writeState: (bytes) =>
      write('cannot write the overlay state', async (q) => {
        await q(`UPDATE ${SANDBOXES} SET state = $2 WHERE sandbox = $1`, [sandbox, Buffer.from(bytes)]);
        await bump(q);
      }),
    readBlob: (id) =>
      read(`cannot read overlay blob ${id}`, async (q) => {
        const rows = await q(`SELECT bytes FROM ${SANDBOX_BLOBS} WHERE sandbox = $1 AND id = $2`, [sandbox, id]);
        return rows[0] === undefined ? undefined : bytesOf(rows[0].bytes);
      }),
    writeBlob: (id, bytes) =>
      write(`cannot write overlay blob ${id}`, async (q) => {
        // Named by its digest: a blob already there holds the same bytes.
        await q(`INSERT INTO ${SANDBOX_BLOBS} (sandbox, id, bytes) VALUES ($1, $2, $3) ON CONFLICT (sandbox, id) DO NOTHING`, [sandbox, id, Buffer.from(bytes)]);
      }),
    deleteBlob: (id) =>
      write(`cannot delete overlay blob ${id}`, async (q) => void (await q(`DELETE FROM ${SANDBOX_BLOBS} WHERE sandbox = $1 AND id = $2`, [sandbox, id]))),
    listBlobs: () => read('cannot list the overlay blobs', async (q) => (await q(`SELECT id FROM ${SANDBOX_BLOBS} WHERE sandbox = $1 ORDER BY id`, [sandbox])).map((r) => String(r.id))),
    readJournal: () =>
      read('cannot read the overlay journal', async (q) => {
        const rows = await q(`SELECT pos::text AS at, bytes FROM ${SANDBOX_JOURNAL} WHERE sandbox = $1 ORDER BY pos`, [sandbox]);
        if (rows.length === 0) return undefined;
        const chunks = rows.map((r) => bytesOf(r.bytes));
        let at = 0;
        for (const [i, r] of rows.entries()) {
          if (Number(r.at) !== at) throw new FsError('FS_IO_ERROR', `the overlay journal in ${where} has a gap at byte ${at}`);
          at += chunks[i]!.byteLength;
        }
        const out = new Uint8Array(at);
        let o = 0;
        for (const c of chunks) (out.set(c, o), (o += c.byteLength));
        return out;
      }),
    writeJournal: (bytes) =>
      write('cannot write the overlay journal', async (q) => {
        await q(`DELETE FROM ${SANDBOX_JOURNAL} WHERE sandbox = $1`, [sandbox]);
        await q(`INSERT INTO ${SANDBOX_JOURNAL} (sandbox, pos, bytes) VALUES ($1, 0, $2)`, [sandbox, Buffer.from(bytes)]);
        await bump(q);
      }),
    appendJournal: (offset, bytes) =>
      write('cannot append to the overlay journal', async (q) => {
        // One transaction: the bytes at `offset` and nothing after them (a torn tail is dropped).
        // At 0 the first chunk is replaced, so an emptied journal still exists (as after writeJournal).
        await q(`DELETE FROM ${SANDBOX_JOURNAL} WHERE sandbox = $1 AND pos >= $2`, [sandbox, offset]);
        if (offset === 0) {
          await q(`INSERT INTO ${SANDBOX_JOURNAL} (sandbox, pos, bytes) VALUES ($1, 0, $2)`, [sandbox, Buffer.from(bytes)]);
          await bump(q);
          return;
        }
        await q(
          `UPDATE ${SANDBOX_JOURNAL} SET bytes = substring(bytes FROM 1 FOR ($2 - pos)::int)
           WHERE sandbox = $1 AND pos < $2 AND pos + length(bytes) > $2`,
          [sandbox, offset],
        );
        if (bytes.byteLength > 0) await q(`INSERT INTO ${SANDBOX_JOURNAL} (sandbox, pos, bytes) VALUES ($1, $2, $3)`, [sandbox, offset, Buffer.from(bytes)]);
        await bump(q);
      }),
  };
  return store;
}

function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new FsError('FS_IO_ERROR', `unexpected bytea value from the database (${typeof value})`);
}
