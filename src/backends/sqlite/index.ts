import type { FileSystem } from '../../seam/types.js';
import type { FsProvider } from '../../seam/provider.js';
import { FsError } from '../../seam/errors.js';
import { createStoreFs, type StoreFsOptions } from '../../store/provider.js';
import { openSqlite } from './db.js';
import { createSqliteStore } from './store.js';


export { createSqliteUpperStore, type SandboxLockOptions, type SqliteUpperStore, type SqliteUpperStoreOptions } from './upper.js';

export interface SqliteFsOptions extends Pick<StoreFsOptions, 'cwd' | 'maxTextBytes' | 'maxBytes' | 'maxFiles'> {
  /** The SQLite file (created when missing), or `:memory:` for one that lives and dies with this filesystem. */
  readonly path: string;
  /** The workspace's name; many workspaces share a file (default `default`). */
  readonly workspace?: string;
  /**
   * Flush every change to disk before it resolves (SQLite's synchronous FULL). By default a change
   * survives a crash of the process, and a power loss may take back the last few, never leaving
   * the file corrupt (WAL with synchronous NORMAL).
   */
  readonly durable?: boolean;
}

export interface SqliteFileSystem extends FileSystem {
  readonly provider: FsProvider;
  readonly workspace: string;
  /** The SQLite file, as an absolute path (or `:memory:`). */
  readonly file: string;
  /** Lets go of the file (the connection closes when every filesystem and store on it in this process has). */
  close(): Promise<void>;
}

/**
 * A filesystem kept in one SQLite file: a workspace of its `dsh_fs_entries` table, shared by
 * every process that opens the file. Each operation is one SQLite transaction.
 */
export function createSqliteFs(options: SqliteFsOptions): SqliteFileSystem {
  const workspace = options.workspace ?? 'default';
  if (typeof workspace !== 'string' || workspace.length === 0) throw new FsError('FS_INVALID_ARGUMENT', 'workspace must be a non-empty string');
  const db = openSqlite(options.path, 'dsh-fs/sqlite');
  const store = createSqliteStore(db, workspace, options.durable === true);
  const fs = createStoreFs(store, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.maxTextBytes === undefined ? {} : { maxTextBytes: options.maxTextBytes }),
    ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
    ...(options.maxFiles === undefined ? {} : { maxFiles: options.maxFiles }),
  });
  return Object.assign(fs, { workspace, file: db.file, close: () => db.close() });
}
export { createSqliteAuditLog, type SqliteAuditLogOptions } from './audit.js';
export { createSqliteFeedback, type SqliteFeedbackOptions } from './feedback.js';
