/**
 * The audit log in the SQLite file of its workspace: rows of `dsh_fs_audit` for one workspace and
 * sandbox. The store keeps rows; which records a query selects is `selectAudit`'s decision.
 */
import { parseAuditRecord, selectAudit, type AuditLog, type AuditRecord } from '../../harness/audit-log.js';
import { FsError } from '../../seam/errors.js';
import { openSqlite } from './db.js';
import { AUDIT } from './schema.js';

export interface SqliteAuditLogOptions {
  /** The SQLite file (the one of the workspace, typically). */
  readonly path: string;
  readonly workspace?: string;
  /** The sandbox the calls worked in; omitted when they worked on the workspace directly. */
  readonly sandbox?: string;
  /** Queries read the records of every sandbox of the workspace (and of direct use), not only `sandbox`'s. */
  readonly allSandboxes?: boolean;
}

/** One row per append, flushed to disk before it resolves. */
export function createSqliteAuditLog(options: SqliteAuditLogOptions): AuditLog {
  const workspace = options.workspace ?? 'default';
  const sandbox = options.sandbox ?? '';
  if (typeof workspace !== 'string' || workspace === '') throw new FsError('FS_INVALID_ARGUMENT', 'workspace must be a non-empty string');
  if (typeof sandbox !== 'string') throw new FsError('FS_INVALID_ARGUMENT', 'sandbox must be a string');
  const db = openSqlite(options.path, 'dsh-fs/sqlite');
  const where = `the audit log of workspace "${workspace}" in ${db.file}`;
  return {
    append: (record: AuditRecord) =>
      db.transaction(
        `cannot append to ${where}`,
        (sql) =>
          sql.run(`INSERT INTO ${AUDIT} (workspace, sandbox, time, owner, tool, outcome, record) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
            workspace,
            sandbox,
            record.time,
            record.owner ?? null,
            record.tool,
            record.outcome,
            JSON.stringify(record),
          ]),
        { durable: true },
      ),
    async query(query = {}) {
      const rows = await db.transaction(
        `cannot read ${where}`,
        (sql) =>
          options.allSandboxes === true
            ? sql.all(`SELECT record FROM ${AUDIT} WHERE workspace = ? ORDER BY seq`, [workspace])
            : sql.all(`SELECT record FROM ${AUDIT} WHERE workspace = ? AND sandbox = ? ORDER BY seq`, [workspace, sandbox]),
        { readOnly: true },
      );
      const records: AuditRecord[] = [];
      for (const row of rows) {
        const record = parseAuditRecord(JSON.parse(String(row.record)));
        if (record !== undefined) records.push(record);
      }
      return selectAudit(records, query);
    },
    close: () => db.close(),
  };
}
