import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { contentVersion } from '../../src/index.js';
import { createPostgresFs, type PgQueryable, type PostgresFileSystem } from '../../src/backends/postgres/index.js';
import type { ConformanceSubject } from '../../src/conformance/index.js';

/** The server the optional suites run against (a connection string), if any. */
export const SERVER = process.env.DSH_FS_TEST_PG;

let pglite: Promise<PGlite> | undefined;
/** One embedded database per test file (starting one takes seconds); subjects get fresh workspaces in it. */
export function sharedPglite(): Promise<PGlite> {
  return (pglite ??= PGlite.create());
}

let pool: pg.Pool | undefined;
export function sharedPool(): pg.Pool {
  if (SERVER === undefined) throw new Error('DSH_FS_TEST_PG is not set');
  return (pool ??= new pg.Pool({ connectionString: SERVER, max: 8 }));
}

export async function closeShared(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.end();
}

export const newWorkspace = (label: string) => `${label}-${randomUUID()}`;

/** The server backend of a pooled connection. */
export const processId = (conn: pg.PoolClient) => (conn as unknown as { processID: number }).processID;

/** The server's backends waiting for a lock that `holder`'s backend holds. */
export async function blockedBy(q: PgQueryable, holder: pg.PoolClient): Promise<number[]> {
  const { rows } = await q.query(`SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [processId(holder)]);
  return rows.map((r) => r.pid);
}

/** Polls `ready` until it holds (a server-side state another connection reaches). */
export async function until(ready: () => Promise<boolean>): Promise<void> {
  while (!(await ready())) await new Promise((r) => setTimeout(r, 20));
}

/** SQL that sets the content of the file row at ($1, $2) to $3 (bytea), as a plain-SQL writer would: $4 version, $5 size. */
export const SQL_SET_CONTENT = `WITH upd AS (UPDATE dsh_fs_entries SET blob = nextval('dsh_fs_blob_ids'), version = $4, size = $5
    WHERE workspace = $1 AND path = $2 RETURNING blob)
  INSERT INTO dsh_fs_chunks (blob, pos, bytes) SELECT blob, 0, $3 FROM upd`;

/** SQL that inserts the file row ($1 workspace, $2 path, $3 parent) with content $4, version $5, size $6. */
export const SQL_INSERT_FILE = `WITH ins AS (INSERT INTO dsh_fs_entries (workspace, path, parent, kind, blob, version, size)
    VALUES ($1, $2, $3, 'file', nextval('dsh_fs_blob_ids'), $5, $6) RETURNING blob)
  INSERT INTO dsh_fs_chunks (blob, pos, bytes) SELECT blob, 0, $4 FROM ins`;

/** Direct row changes behind the provider's back, as another process with plain SQL would make them. */
export function rowHooks(client: PgQueryable, workspace: string) {
  const ancestors = async (path: string) => {
    const dirs: string[] = [];
    for (let p = posix.dirname(path); p !== '/'; p = posix.dirname(p)) dirs.unshift(p);
    if (dirs.length === 0) return;
    await client.query(
      `INSERT INTO dsh_fs_entries (workspace, path, parent, kind)
       SELECT $1, d, p, 'directory' FROM unnest($2::text[], $3::text[]) AS t(d, p)
       ON CONFLICT (workspace, path) DO NOTHING`,
      [workspace, dirs, dirs.map((d) => posix.dirname(d))],
    );
  };
  return {
    async writeBytes(path: string, bytes: Uint8Array, options?: { keepMtime?: boolean }) {
      await ancestors(path);
      // As the docs tell a plain-SQL writer: a new blob id, the row pointed at it, its chunks.
      await client.query(
        `WITH up AS (INSERT INTO dsh_fs_entries (workspace, path, parent, kind, blob, version, size)
           VALUES ($1, $2, $3, 'file', nextval('dsh_fs_blob_ids'), $5, $6)
           ON CONFLICT (workspace, path) DO UPDATE SET blob = EXCLUDED.blob, version = EXCLUDED.version, size = EXCLUDED.size,
             mtime = CASE WHEN $7 THEN dsh_fs_entries.mtime ELSE now() END
           RETURNING blob)
         INSERT INTO dsh_fs_chunks (blob, pos, bytes) SELECT blob, 0, $4 FROM up WHERE octet_length($4::bytea) > 0`,
        [workspace, path, posix.dirname(path), Buffer.from(bytes), contentVersion(bytes), bytes.byteLength, options?.keepMtime === true],
      );
    },
    async remove(path: string) {
      await client.query(`DELETE FROM dsh_fs_entries WHERE workspace = $1 AND path = $2 AND kind <> 'directory'`, [workspace, path]);
    },
    async readBytes(path: string): Promise<Uint8Array | undefined> {
      const { rows } = await client.query(
        `SELECT coalesce((SELECT string_agg(c.bytes, ''::bytea ORDER BY c.pos) FROM dsh_fs_chunks c WHERE c.blob = e.blob), ''::bytea) AS content
         FROM dsh_fs_entries e WHERE workspace = $1 AND path = $2 AND kind = 'file'`,
        [workspace, path],
      );
      return rows[0] === undefined ? undefined : new Uint8Array(rows[0].content);
    },
    async symlink(target: string, path: string) {
      await ancestors(path);
      await client.query(`INSERT INTO dsh_fs_entries (workspace, path, parent, kind, link) VALUES ($1, $2, $3, 'symlink', $4)`, [
        workspace,
        path,
        posix.dirname(path),
        target,
      ]);
    },
    async mkdir(path: string) {
      await ancestors(`${path}/x`);
    },
    async drop() {
      await client.query(`DELETE FROM dsh_fs_entries WHERE workspace = $1`, [workspace]);
    },
  };
}

/** A conformance subject: a fresh workspace rooted at /ws, with /outside reachable by the hooks only. */
export async function postgresSubject(client: PgQueryable): Promise<ConformanceSubject & { fs: PostgresFileSystem }> {
  const workspace = newWorkspace('conformance');
  const fs = createPostgresFs({ client, workspace, root: '/ws' });
  await fs.mkdir(await fs.resolve('/ws/suite'));
  const hooks = rowHooks(client, workspace);
  return {
    fs,
    provider: fs.provider,
    base: '/ws/suite',
    outsideDir: '/outside',
    outOfBand: { writeBytes: hooks.writeBytes, remove: hooks.remove, readBytes: hooks.readBytes },
    setup: { symlink: hooks.symlink, mkdir: hooks.mkdir },
    capabilities: { symlinks: true, executable: true, linkCreation: true },
    cleanup: () => hooks.drop(),
  };
}
