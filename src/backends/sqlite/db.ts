/**
 * One connection to a SQLite file per process, shared by every filesystem and sandbox store that
 * opens the file: its transactions run one at a time (an async mutex), and SQLite's own locking
 * orders them with other processes. Statements never throw a raw SQLite error: SQLITE_BUSY is
 * FS_CONFLICT, anything else FS_IO_ERROR naming the file and what was being done.
 */
import { resolve } from 'node:path';
import { requirePeer } from '../../peers.js';
import { FsError } from '../../seam/errors.js';
import { KeyedMutex } from '../../seam/lock.js';
import { META, SCHEMA, SCHEMA_VERSION, checkVersion } from './schema.js';

/** The parts of libsql's synchronous API this backend uses. */
interface Statement {
  run(params: unknown[]): unknown;
  get(params: unknown[]): Record<string, unknown> | undefined;
  all(params: unknown[]): Record<string, unknown>[];
}
interface Connection {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}
type ConnectionClass = new (path: string) => Connection;

/** How long a write waits for another process's transaction to finish before FS_CONFLICT. */
export const BUSY_TIMEOUT_MS = 10_000;

export type Row = Record<string, unknown>;

/** Runs statements inside a transaction. */
export interface Sql {
  run(sql: string, params?: unknown[]): void;
  get(sql: string, params?: unknown[]): Row | undefined;
  all(sql: string, params?: unknown[]): Row[];
}

export interface TxOptions {
  readonly readOnly?: boolean;
  readonly durable?: boolean;
}

export interface SqliteDb {
  /** The file, for messages. */
  readonly file: string;
  /**
   * `body` in one transaction: BEGIN IMMEDIATE for a write, a deferred BEGIN for a read. A
   * `durable` write is flushed to disk before it resolves (synchronous FULL); any other commit
   * survives a crash of the process, and a power loss may take back the last ones (WAL with
   * synchronous NORMAL), never corrupting the file.
   */
  transaction<T>(what: string, body: (sql: Sql) => Promise<T> | T, options?: TxOptions): Promise<T>;
  /** Lets go of this user's share of the connection; the last one closes it. */
  close(): Promise<void>;
}

interface Shared {
  readonly connection: Connection;
  readonly statements: Map<string, Statement>;
  readonly serial: KeyedMutex;
  users: number;
}

const open = new Map<string, Shared>();

/** Opens (or shares) the connection to `path`, creating the tables when missing. */
export function openSqlite(path: string, needer: string): SqliteDb {
  if (typeof path !== 'string' || path.length === 0) throw new FsError('FS_INVALID_ARGUMENT', 'path must be a non-empty string (the SQLite file)');
  const file = path === ':memory:' ? path : resolve(path);
  let shared = file === ':memory:' ? undefined : open.get(file);
  if (shared === undefined) {
    shared = { connection: connect(file, needer), statements: new Map(), serial: new KeyedMutex(), users: 0 };
    if (file !== ':memory:') open.set(file, shared);
  }
  shared.users++;
  let closed = false;
  const s = shared;
  return {
    file,
    transaction: (what, body, options = {}) => {
      if (closed) return Promise.reject(new FsError('FS_IO_ERROR', `${what}: the SQLite file ${file} was closed`));
      return s.serial.run('', () => inTransaction(s, file, what, body, options));
    },
    close: () =>
      s.serial.run('', () => {
        if (closed) return;
        closed = true;
        if (--s.users > 0) return;
        if (open.get(file) === s) open.delete(file);
        try {
          s.connection.close();
        } catch (err) {
          throw sqliteError(err, `cannot close the SQLite file ${file}`);
        }
      }),
  };
}

function connect(file: string, needer: string): Connection {
  const Database = requirePeer<ConnectionClass>('libsql', 'libsql', needer);
  let connection: Connection | undefined;
  try {
    connection = new Database(file);
    connection.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    connection.exec('PRAGMA journal_mode = WAL');
    connection.exec('PRAGMA synchronous = NORMAL');
    connection.exec('BEGIN IMMEDIATE');
    try {
      connection.exec(SCHEMA);
      const found = connection.prepare(`SELECT value FROM ${META} WHERE key = 'schema_version'`).get([]);
      checkVersion(found?.value === undefined ? undefined : String(found.value), `the SQLite file ${file}`);
      if (found === undefined) connection.prepare(`INSERT INTO ${META} (key, value) VALUES ('schema_version', ?)`).run([String(SCHEMA_VERSION)]);
      connection.exec('COMMIT');
    } catch (err) {
      connection.exec('ROLLBACK');
      throw err;
    }
    return connection;
  } catch (err) {
    try {
      connection?.close();
    } catch {
      // Already failing; the first error says why.
    }
    throw sqliteError(err, `cannot open the SQLite file ${file}`);
  }
}

async function inTransaction<T>(s: Shared, file: string, what: string, body: (sql: Sql) => Promise<T> | T, options: TxOptions): Promise<T> {
  const readOnly = options.readOnly === true;
  const durable = !readOnly && options.durable === true;
  const full = `${what} in the SQLite file ${file}`;
  const statement = (sql: string) => {
    let st = s.statements.get(sql);
    if (st === undefined) s.statements.set(sql, (st = s.connection.prepare(sql)));
    return st;
  };
  const guard = <R>(fn: () => R): R => {
    try {
      return fn();
    } catch (err) {
      throw sqliteError(err, full);
    }
  };
  if (durable) guard(() => s.connection.exec('PRAGMA synchronous = FULL'));
  try {
    guard(() => s.connection.exec(readOnly ? 'BEGIN' : 'BEGIN IMMEDIATE'));
  } catch (err) {
    if (durable) normal(s);
    throw err;
  }
  let open = true;
  const sql: Sql = {
    run: (text, params = []) => void guard(() => (check(open, full), statement(text).run(params))),
    get: (text, params = []) => guard(() => (check(open, full), statement(text).get(params))),
    all: (text, params = []) => guard(() => (check(open, full), statement(text).all(params))),
  };
  try {
    const result = await body(sql);
    guard(() => s.connection.exec('COMMIT'));
    return result;
  } catch (err) {
    try {
      s.connection.exec('ROLLBACK');
    } catch {
      // SQLite rolled back by itself (a failed COMMIT, a full disk): nothing is left open.
    }
    // Statement errors are mapped where they happen; the body's own errors pass unchanged.
    throw err;
  } finally {
    open = false;
    if (durable) normal(s);
  }
}

/** Back to the connection's default after a durable write (a failure here only costs durability later). */
function normal(s: Shared): void {
  try {
    s.connection.exec('PRAGMA synchronous = NORMAL');
  } catch {
    // The next durable write sets FULL again; the others are no worse off than NORMAL.
  }
}

/** A statement after its transaction ended (a body that kept a handle) is a bug, not a write. */
function check(open: boolean, full: string): void {
  if (!open) throw new FsError('FS_IO_ERROR', `${full}: a statement ran after its transaction ended`);
}

/** Any error as an FsError: SQLite's busy is a conflict, every other SQLite error an I/O error. */
export function sqliteError(err: unknown, what: string): FsError {
  if (err instanceof FsError) return err;
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  const detail = err instanceof Error ? err.message : String(err);
  if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) {
    return new FsError('FS_CONFLICT', `${what}: another connection held the file locked for more than ${BUSY_TIMEOUT_MS / 1000} s (${code}); try again`, { cause: err });
  }
  const suffix = typeof code === 'string' && code.startsWith('SQLITE') ? ` (${code})` : '';
  return new FsError('FS_IO_ERROR', `${what}: ${detail}${suffix}`, { cause: err });
}

/** A BLOB column's value as bytes (libsql gives an ArrayBuffer, possibly of another realm). */
export function blobOf(value: unknown, what: string): Uint8Array {
  if (value instanceof Uint8Array) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (Object.prototype.toString.call(value) === '[object ArrayBuffer]') return new Uint8Array(value as ArrayBuffer);
  throw new FsError('FS_IO_ERROR', `${what}: expected a BLOB from SQLite, got ${value === null ? 'NULL' : typeof value}`);
}
