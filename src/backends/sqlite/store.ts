/**
 * The store tier's FsStore over one workspace of a SQLite file: rows keyed by (workspace, path),
 * listed by (parent, name) a page at a time. Semantics (paths, versions, directories) belong to
 * the store tier; this file keeps entries and runs transactions.
 */
import type { FsVersion } from '../../seam/model.js';
import type { FsStore, StoreChild, StoreEntry, StoreHead, StoreTx } from '../../store/types.js';
import { blobOf, type Row, type Sql, type SqliteDb } from './db.js';
import { ENTRIES } from './schema.js';

/** Children per page of a listing. */
export const LIST_PAGE = 500;

const HEAD_COLUMNS = 'kind, version, executable, link, mtime, length(bytes) AS size';

export function createSqliteStore(db: SqliteDb, workspace: string, durable = false): FsStore {
  return {
    transaction: (body, options = {}) =>
      db.transaction(
        options.readOnly === true ? `cannot read workspace "${workspace}"` : `cannot change workspace "${workspace}"`,
        (sql) => body(storeTx(sql, workspace)),
        { readOnly: options.readOnly === true, durable },
      ),
    close: () => db.close(),
  };
}

function storeTx(sql: Sql, workspace: string): StoreTx {
  return {
    get: async (key) => {
      const row = sql.get(`SELECT kind, bytes, version, executable, link, mtime FROM ${ENTRIES} WHERE workspace = ? AND path = ?`, [workspace, key]);
      return row === undefined ? undefined : entryOf(row);
    },
    head: async (key) => {
      const row = sql.get(`SELECT ${HEAD_COLUMNS} FROM ${ENTRIES} WHERE workspace = ? AND path = ?`, [workspace, key]);
      return row === undefined ? undefined : headOf(row);
    },
    put: async (key, entry) => {
      const { parent, name } = split(key);
      const file = entry.kind === 'file' ? entry : undefined;
      sql.run(
        `INSERT OR REPLACE INTO ${ENTRIES} (workspace, path, parent, name, kind, bytes, version, executable, link, mtime)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          workspace,
          key,
          parent,
          name,
          entry.kind,
          file === undefined ? null : file.bytes,
          file === undefined ? null : file.version,
          file?.executable === true ? 1 : 0,
          entry.kind === 'link' ? entry.text : null,
          entry.kind === 'link' ? null : (entry.mtimeMs ?? null),
        ],
      );
    },
    delete: async (key) => void sql.run(`DELETE FROM ${ENTRIES} WHERE workspace = ? AND path = ?`, [workspace, key]),
    list: async (dir, next) => {
      const rows = sql.all(
        `SELECT name, ${HEAD_COLUMNS} FROM ${ENTRIES} WHERE workspace = ? AND parent = ? AND name > ? ORDER BY name LIMIT ?`,
        [workspace, dir, next ?? '', LIST_PAGE],
      );
      const children: StoreChild[] = rows.map((row) => ({ name: String(row.name), ...headOf(row) }));
      return rows.length < LIST_PAGE ? { children } : { children, next: String(rows[rows.length - 1]!.name) };
    },
  };
}

/** The parent and name columns of a key (`/` has the parent '' and the name ''). */
function split(key: string): { parent: string; name: string } {
  if (key === '/') return { parent: '', name: '' };
  const at = key.lastIndexOf('/');
  return { parent: at === 0 ? '/' : key.slice(0, at), name: key.slice(at + 1) };
}

function entryOf(row: Row): StoreEntry {
  if (row.kind !== 'file') return headOf(row) as StoreEntry;
  const bytes = blobOf(row.bytes, 'a file read from SQLite');
  return { kind: 'file', bytes, version: String(row.version) as FsVersion, executable: row.executable === 1, ...mtime(row) };
}

function headOf(row: Row): StoreHead {
  if (row.kind === 'link') return { kind: 'link', text: String(row.link) };
  if (row.kind === 'directory') return { kind: 'directory', ...mtime(row) };
  return { kind: 'file', size: Number(row.size ?? 0), version: String(row.version) as FsVersion, executable: row.executable === 1, ...mtime(row) };
}

const mtime = (row: Row) => (typeof row.mtime === 'number' ? { mtimeMs: row.mtime } : {});
