/**
 * An overlay's upper layer kept in the SQLite file of its workspace (the overlay's UpperStore
 * seam): one row per sandbox, its blobs and journal in tables of their own. One writer per
 * sandbox at a time, recorded in the sandbox's row; forks are sandboxes of the same file.
 */
import { FsError } from '../../seam/errors.js';
import { KeyedMutex } from '../../seam/lock.js';
import type { UpperStore } from '../overlay/store.js';
import { openSqlite, blobOf, type SqliteDb } from './db.js';
import { SANDBOXES, SANDBOX_BLOBS, SANDBOX_JOURNAL } from './schema.js';
import { checkSandbox, type UpperContext } from './upper-context.js';
import { acquire, newHolder, release, type SandboxLockOptions } from './upper-lock.js';
import * as records from './upper-records.js';
import { read, revisionOf } from './upper-session.js';

export type { SandboxLockOptions } from './upper-lock.js';

export interface SqliteUpperStoreOptions {
  /** The SQLite file (the one of the workspace, typically). */
  readonly path: string;
  /** The sandbox's name; many sandboxes share the tables. */
  readonly sandbox: string;
}

export interface SqliteUpperStore extends UpperStore {
  readonly sandbox: string;
  /** Whether this store holds the sandbox's lock now. */
  readonly locked: boolean;
  /** Takes the sandbox's lock; held elsewhere past `timeoutMs`: `FS_CONFLICT`. A no-op when already held. */
  lock(options?: SandboxLockOptions): Promise<void>;
  /** Lets go of the lock. A no-op when not held. */
  unlock(): Promise<void>;
  /** Runs `fn` holding the lock (taken and let go around it unless already held), one call at a time. */
  withLock<T>(fn: () => Promise<T>, options?: SandboxLockOptions): Promise<T>;
  /** Whether the sandbox has a saved state. */
  exists(): Promise<boolean>;
  /** Changes whenever the state document or journal changes ('absent' when there is no sandbox). */
  revision(): Promise<string>;
  /** Deletes the sandbox and everything it holds (takes the lock first, without waiting). */
  drop(): Promise<void>;
  /** Lets go of the lock and of the file. */
  close(): Promise<void>;
}

export function createSqliteUpperStore(options: SqliteUpperStoreOptions): SqliteUpperStore {
  const sandbox = checkSandbox(options.sandbox);
  const db = openSqlite(options.path, 'dsh-fs/sqlite');
  const ctx: UpperContext = { db, sandbox, where: `SQLite sandbox "${sandbox}" in ${db.file}`, me: newHolder(), serial: new KeyedMutex(), held: false, basis: undefined };
  const lock = async (lockOptions: SandboxLockOptions = {}) => {
    if (ctx.held) return;
    await acquire(ctx, lockOptions);
    // Whoever takes the lock explicitly reloads what changed (as the CLI does by revision).
    ctx.basis = await revision();
  };
  const revision = () => read(ctx, 'cannot read the overlay state', (sql) => revisionOf(ctx, sql));
  return {
    where: ctx.where,
    sandbox,
    get locked() {
      return ctx.held;
    },
    lock,
    unlock: () => release(ctx),
    withLock: (fn, lockOptions = {}) =>
      ctx.serial.run('', async () => {
        if (ctx.held) return fn();
        await lock(lockOptions);
        try {
          return await fn();
        } finally {
          await release(ctx);
        }
      }),
    exists: () => records.exists(ctx),
    revision,
    drop: () => records.drop(ctx),
    close: async () => {
      await release(ctx).catch(() => {});
      await db.close();
    },
    readState: () => records.readState(ctx),
    writeState: (bytes) => records.writeState(ctx, bytes),
    readBlob: (id) => records.readBlob(ctx, id),
    writeBlob: (id, bytes) => records.writeBlob(ctx, id, bytes),
    deleteBlob: (id) => records.deleteBlob(ctx, id),
    listBlobs: () => records.listBlobs(ctx),
    readJournal: () => records.readJournal(ctx),
    writeJournal: (bytes) => records.writeJournal(ctx, bytes),
    appendJournal: (offset, bytes) => records.appendJournal(ctx, offset, bytes),
    fork: async (where, forkOptions) => {
      await fork(ctx, checkSandbox(where), forkOptions);
      return createSqliteUpperStore({ path: db.file, sandbox: where });
    },
    readForkBase: () =>
      read(ctx, 'cannot read the fork base', (sql) => {
        const row = sql.get(`SELECT fork_state, fork_journal FROM ${SANDBOXES} WHERE sandbox = ?`, [sandbox]);
        if (row?.fork_state == null) return undefined;
        return { state: blobOf(row.fork_state, 'the fork base'), journal: blobOf(row.fork_journal, 'the fork base') };
      }),
  };
}

/**
 * Makes the sandbox `into` (new: no state, no blobs) a fork of this one's saved state, in one
 * transaction: the blobs copied, the state document and the journal's first `journalEnd` bytes
 * kept as its fork base, `journal` as its own journal.
 */
function fork(ctx: UpperContext, into: string, options: { readonly journalEnd: number; readonly blobs: readonly string[]; readonly journal: Uint8Array }): Promise<void> {
  const what = `cannot fork ${ctx.where} into sandbox "${into}"`;
  return ctx.db.transaction(what, (sql) => {
    const taken = sql.get(`SELECT 1 AS x FROM ${SANDBOXES} WHERE sandbox = ? AND state IS NOT NULL`, [into]) ?? sql.get(`SELECT 1 AS x FROM ${SANDBOX_BLOBS} WHERE sandbox = ? LIMIT 1`, [into]);
    if (taken !== undefined) throw new FsError('FS_ALREADY_EXISTS', `${what}: sandbox "${into}" is not empty; a fork needs a new sandbox`);
    const saved = sql.get(`SELECT state FROM ${SANDBOXES} WHERE sandbox = ?`, [ctx.sandbox])?.state;
    const state = saved == null ? undefined : blobOf(saved, 'the overlay state');
    const journal = records.journalOf(sql, ctx.sandbox, ctx.where);
    if (state === undefined || journal === undefined || journal.byteLength < options.journalEnd) throw new FsError('FS_IO_ERROR', `${what}: its saved state or journal is missing or cut short`);
    sql.run(`DELETE FROM ${SANDBOXES} WHERE sandbox = ?`, [into]);
    sql.run(`DELETE FROM ${SANDBOX_JOURNAL} WHERE sandbox = ?`, [into]);
    for (const id of new Set(options.blobs)) {
      sql.run(`INSERT OR IGNORE INTO ${SANDBOX_BLOBS} (sandbox, id, bytes) SELECT ?, id, bytes FROM ${SANDBOX_BLOBS} WHERE sandbox = ? AND id = ?`, [into, ctx.sandbox, id]);
    }
    sql.run(`INSERT INTO ${SANDBOX_JOURNAL} (sandbox, pos, bytes) VALUES (?, 0, ?)`, [into, options.journal]);
    sql.run(`INSERT INTO ${SANDBOXES} (sandbox, state, revision, fork_state, fork_journal) VALUES (?, ?, 1, ?, ?)`, [into, state, state, journal.subarray(0, options.journalEnd)]);
  });
}
