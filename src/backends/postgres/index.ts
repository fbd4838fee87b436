import { createFs, type CreateFsOptions } from '../../seam/fs.js';
import type { FileSystem } from '../../seam/types.js';
import { createPostgresProvider, type PostgresProvider, type PostgresProviderOptions } from './provider.js';

export { createPostgresProvider, type PostgresProvider, type PostgresProviderOptions } from './provider.js';

export type { PgQueryable } from './client.js';
export {
  createPostgresUpperStore,
  type PostgresUpperStore,
  type PostgresUpperStoreOptions,
  type SandboxLockOptions,
} from './upper.js';

export interface PostgresFsOptions extends PostgresProviderOptions, Pick<CreateFsOptions, 'maxTextBytes' | 'maxBytes' | 'maxFiles'> {}

export interface PostgresFileSystem extends FileSystem {
  readonly root: string;
  readonly provider: PostgresProvider;
}

/**
 * A filesystem kept in PostgreSQL: one workspace of the `dsh_fs_entries` table, shared by every
 * process and machine that opens it with the same client database and workspace name.
 */
export function createPostgresFs(options: PostgresFsOptions): PostgresFileSystem {
  const provider = createPostgresProvider(options);
  const { maxTextBytes, maxBytes, maxFiles } = options;
  const fs = createFs(provider, {
    ...(maxTextBytes === undefined ? {} : { maxTextBytes }),
    ...(maxBytes === undefined ? {} : { maxBytes }),
    ...(maxFiles === undefined ? {} : { maxFiles }),
  });
  return Object.assign(fs, { root: provider.root, provider });
}
export { exportTree, importTree, type TransferOptions, type TransferReport } from './transfer.js';
export { createPostgresAuditLog, type PostgresAuditLogOptions } from './audit.js';
export { createPostgresFeedback, type PostgresFeedbackOptions } from './feedback.js';
