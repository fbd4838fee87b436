/** What every part of the SQLite upper store shares: the file, the sandbox, and what the store knows of its lock. */
import { FsError } from '../../seam/errors.js';
import { KeyedMutex } from '../../seam/lock.js';
import type { SqliteDb } from './db.js';

export interface UpperContext {
  readonly db: SqliteDb;
  readonly sandbox: string;
  /** How errors name the sandbox. */
  readonly where: string;
  /** This store's holder record. */
  readonly me: string;
  /** withLock's calls, one at a time. */
  readonly serial: KeyedMutex;
  /** Whether this store holds the lock (as far as it knows). */
  held: boolean;
  /** The revision this store last knew (see the PostgreSQL store: a stale store must not save over another's work). */
  basis: string | undefined;
}

export function checkSandbox(sandbox: unknown): string {
  if (typeof sandbox !== 'string' || sandbox.length === 0) throw new FsError('FS_INVALID_ARGUMENT', 'sandbox must be a non-empty string');
  return sandbox;
}
