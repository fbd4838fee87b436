/**
 * An overlay's upper layer kept in PostgreSQL (the overlay's UpperStore seam): a sandbox started
 * on one host can be reviewed and committed from another. One writer per sandbox at a time,
 * enforced with a session-level advisory lock.
 */
import type { UpperStore } from '../overlay/store.js';
import { createUpperContext, type PostgresUpperStoreOptions, type SandboxLockOptions, type UpperContext } from './upper-context.js';
import { appendJournal, readJournal, writeJournal } from './upper-journal.js';
import { acquire, unlock } from './upper-lock.js';
import { deleteBlob, drop, exists, listBlobs, readBlob, readState, writeBlob, writeState } from './upper-records.js';
import { revisionNow } from './upper-session.js';

export type { PostgresUpperStoreOptions, SandboxLockOptions } from './upper-context.js';
export { sandboxLockKey } from './upper-context.js';

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

export function createPostgresUpperStore(options: PostgresUpperStoreOptions): PostgresUpperStore {
  const ctx = createUpperContext(options);
  return {
    where: ctx.where,
    sandbox: ctx.sandbox,
    get locked() {
      return ctx.held !== undefined && !ctx.held.lost;
    },
    lock: (lockOptions = {}) => lock(ctx, lockOptions),
    unlock: () => unlock(ctx),
    withLock: (fn, lockOptions = {}) => withLock(ctx, fn, lockOptions),
    exists: () => exists(ctx),
    revision: () => revisionNow(ctx),
    drop: () => drop(ctx),
    readState: () => readState(ctx),
    writeState: (bytes) => writeState(ctx, bytes),
    readBlob: (id) => readBlob(ctx, id),
    writeBlob: (id, bytes) => writeBlob(ctx, id, bytes),
    deleteBlob: (id) => deleteBlob(ctx, id),
    listBlobs: () => listBlobs(ctx),
    readJournal: () => readJournal(ctx),
    writeJournal: (bytes) => writeJournal(ctx, bytes),
    appendJournal: (offset, bytes) => appendJournal(ctx, offset, bytes),
  };
}

async function lock(ctx: UpperContext, options: SandboxLockOptions): Promise<void> {
  await acquire(ctx, options);
  // Whoever takes the lock explicitly reloads what changed (as the CLI does by revision).
  ctx.basis = await revisionNow(ctx);
}

function withLock<T>(ctx: UpperContext, fn: () => Promise<T>, options: SandboxLockOptions): Promise<T> {
  return ctx.serial.run('', async () => {
    if (ctx.held !== undefined && !ctx.held.lost) return fn();
    await lock(ctx, options);
    try {
      return await fn();
    } finally {
      await unlock(ctx);
    }
  });
}
