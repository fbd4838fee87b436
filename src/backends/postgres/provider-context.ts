/** What every part of the PostgreSQL provider shares: the workspace, its root, the connection, readiness. */
import { FsError, canonicalPath } from '../../seam/index.js';
import { Db, abortable, type PgQueryable, type Q } from './client.js';
import { redirect, type Workspace } from './provider-resolve.js';
import { ensureDirs, strictAncestors } from './rows.js';
import { ensureSchema } from './schema.js';

/** Default largest file stored: 64 MiB (one bytea value; PostgreSQL's own limit is 1 GiB). */
export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;

export interface PostgresProviderOptions {
  /** A `pg` Pool (recommended), a `pg` Client, a PGlite instance, or anything with `query(text, values)` → `{ rows }`. */
  readonly client: PgQueryable;
  /** The workspace's name; many workspaces share one table. */
  readonly workspace: string;
  /** The directory the filesystem is confined to (default `/`). */
  readonly root?: string;
  /** Default directory for relative paths (default: `root`). */
  readonly cwd?: string;
  /** Larger writes are refused with FS_TOO_LARGE (default 64 MiB). */
  readonly maxFileBytes?: number;
}

export interface PgContext extends Workspace {
  readonly cwd: string;
  readonly maxFileBytes: number;
  readonly db: Db;
  /** Resolves once the schema and the root's rows exist; a signal ends only its caller's wait. */
  ready(signal?: AbortSignal): Promise<void>;
  /** Where a link at `key` leads now, or undefined when it leads to no other key. */
  redirect(q: Q, key: string): Promise<string | undefined>;
}

/** Checks the options and builds the context; nothing is sent to the server until the first `ready`. */
export function createContext(options: PostgresProviderOptions): PgContext {
  if (typeof options.workspace !== 'string' || options.workspace.length === 0) {
    throw new FsError('FS_INVALID_ARGUMENT', 'workspace must be a non-empty string');
  }
  if (typeof options.client?.query !== 'function') throw new FsError('FS_INVALID_ARGUMENT', 'client must have a query(text, values) method');
  const ws = options.workspace;
  const root = canonicalPath(options.root ?? '/', '/');
  const cwd = canonicalPath(options.cwd ?? root, root);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const db = new Db(options.client);

  let readiness: Promise<void> | undefined;
  const prepared = () =>
    (readiness ??= (async () => {
      await ensureSchema(db);
      // The root and its ancestors exist as directories, so every entry below has its parent.
      await db.session(`cannot prepare the workspace "${ws}"`, undefined, (q) => ensureDirs(q, ws, ['/', ...strictAncestors(root), ...(root === '/' ? [] : [root])], `cannot use "${root}" as the root`));
    })().catch((err) => {
      readiness = undefined; // the next call tries again (the server may be back)
      throw err;
    }));

  const workspace: Workspace = { ws, root };
  return {
    ws,
    root,
    cwd,
    maxFileBytes,
    db,
    // Shared by every call; each caller's signal ends only its own wait for it.
    ready: (signal?: AbortSignal) => abortable(prepared(), signal, `cannot prepare the workspace "${ws}"`),
    redirect: (q, key) => redirect(q, workspace, key),
  };
}
