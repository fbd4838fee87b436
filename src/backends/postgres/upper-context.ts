/**
 * What every part of the PostgreSQL upper store shares: the sandbox, its lock key, the reading
 * connection, and the little state a store keeps between calls (the lock it holds, the revision
 * it last knew).
 */
import { createHash } from 'node:crypto';
import { FsError, KeyedMutex } from '../../seam/index.js';
import { Db, type PgQueryable } from './client.js';
import { ensureSchema } from './schema.js';

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

/** The sandbox's lock as held: where writes go (the lock's own connection, so a lost connection cannot write unlocked). */
export interface HeldLock {
  readonly db: Db;
  release(): Promise<void>;
  markLost(): void;
  lost: boolean;
}

export interface UpperContext {
  readonly client: PgQueryable;
  readonly sandbox: string;
  /** How errors name the sandbox. */
  readonly where: string;
  /** The advisory lock's key (see sandboxLockKey). */
  readonly key: string;
  /** Reads (and, with a single connection, writes) go through this. */
  readonly readDb: Db;
  /** withLock's calls, one at a time. */
  readonly serial: KeyedMutex;
  /** Creates the tables once (again after a failure). */
  ready(): Promise<void>;
  /** While locked: the lock and where writes go. */
  held: HeldLock | undefined;
  /** Concurrent first writes share one attempt at the lock. */
  acquiring: Promise<void> | undefined;
  /**
   * The sandbox's revision as this store last knew it (its first read of the state, its own
   * saves, an explicit lock). A change that takes the lock by itself compares: another process
   * saved since, so what this process holds in memory is stale and must not be saved over it.
   */
  basis: string | undefined;
  /** The revision the current write's transaction bumped to, if it did. */
  bumped: string | undefined;
}

/** Checks the options and builds the context. */
export function createUpperContext(options: PostgresUpperStoreOptions): UpperContext {
  const { client, sandbox } = options;
  if (typeof sandbox !== 'string' || sandbox.length === 0) throw new FsError('FS_INVALID_ARGUMENT', 'sandbox must be a non-empty string');
  if (typeof client?.query !== 'function') throw new FsError('FS_INVALID_ARGUMENT', 'client must have a query(text, values) method');
  const readDb = new Db(client);
  let schema: Promise<void> | undefined;
  return {
    client,
    sandbox,
    where: `PostgreSQL sandbox "${sandbox}"`,
    key: sandboxLockKey(sandbox),
    readDb,
    serial: new KeyedMutex(),
    ready: () =>
      (schema ??= ensureSchema(readDb).catch((err) => {
        schema = undefined;
        throw err;
      })),
    held: undefined,
    acquiring: undefined,
    basis: undefined,
    bumped: undefined,
  };
}

/** The advisory lock's key: 64 bits of a digest of the name (the schema lock is a small constant). */
export function sandboxLockKey(sandbox: string): string {
  const digest = createHash('sha256').update('dsh-fs sandbox\0').update(sandbox).digest();
  return digest.readBigInt64BE(0).toString();
}
