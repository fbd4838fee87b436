/**
 * The audit log in PostgreSQL: rows of the `dsh_fs_audit` table for one workspace and sandbox.
 * The store keeps rows; which records a query selects is `selectAudit`'s decision.
 */
import { parseAuditRecord, selectAudit, type AuditLog, type AuditRecord } from '../../harness/audit-log.js';
import { FsError } from '../../seam/index.js';
import { Db, type PgQueryable } from './client.js';
import { AUDIT, ensureSchema } from './schema.js';

export interface PostgresAuditLogOptions {
  /** As for createPostgresFs: a `pg` Pool (recommended), a `pg` Client, or PGlite. */
  readonly client: PgQueryable;
  /** The workspace the calls worked on. */
  readonly workspace: string;
  /** The sandbox the calls worked in; omitted when they worked on the workspace directly. */
  readonly sandbox?: string;
  /** Queries read the records of every sandbox of the workspace (and of direct use), not only `sandbox`'s. */
  readonly allSandboxes?: boolean;
}

/** One row per append, in one statement: a record is stored whole or not at all. */
export function createPostgresAuditLog(options: PostgresAuditLogOptions): AuditLog {
  const { workspace } = options;
  const sandbox = options.sandbox ?? '';
  if (typeof workspace !== 'string' || workspace === '') throw new FsError('FS_INVALID_ARGUMENT', 'workspace must be a non-empty string');
  if (typeof sandbox !== 'string') throw new FsError('FS_INVALID_ARGUMENT', 'sandbox must be a string');
  if (typeof options.client?.query !== 'function') throw new FsError('FS_INVALID_ARGUMENT', 'client must have a query(text, values) method');
  const db = new Db(options.client);
  let schema: Promise<void> | undefined;
  const ready = () =>
    (schema ??= ensureSchema(db).catch((err) => {
      schema = undefined;
      throw err;
    }));
  const where = `the audit log of workspace "${workspace}"${sandbox === '' ? '' : ` (sandbox "${sandbox}")`}`;
  return {
    async append(record: AuditRecord) {
      await ready();
      await db.session(`cannot append to ${where}`, undefined, (q) =>
        q(`INSERT INTO ${AUDIT} (workspace, sandbox, time, owner, tool, outcome, record) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
          workspace,
          sandbox,
          record.time,
          record.owner ?? null,
          record.tool,
          record.outcome,
          JSON.stringify(record),
        ]),
      );
    },
    async query(query = {}) {
      await ready();
      // Owner and tool are equalities, selected in SQL to read fewer rows; selectAudit decides the rest.
      const values: unknown[] = [workspace];
      let sql = `SELECT record FROM ${AUDIT} WHERE workspace = $1`;
      if (options.allSandboxes !== true) sql += ` AND sandbox = $${values.push(sandbox)}`;
      if (query.owner !== undefined) sql += ` AND owner = $${values.push(query.owner)}`;
      if (query.tool !== undefined) sql += ` AND tool = $${values.push(query.tool)}`;
      const rows = await db.session(`cannot read ${where}`, undefined, (q) => q(`${sql} ORDER BY seq`, values));
      const records: AuditRecord[] = [];
      for (const row of rows) {
        const record = parseAuditRecord(JSON.parse(String(row.record)));
        if (record !== undefined) records.push(record);
      }
      return selectAudit(records, query);
    },
  };
}
