/** The tables of a dsh-fs SQLite file, created when missing, and the schema version they follow. */
import { FsError } from '../../seam/errors.js';

export const SCHEMA_VERSION = 1;

export const META = 'dsh_fs_meta';
export const ENTRIES = 'dsh_fs_entries';
export const SANDBOXES = 'dsh_fs_sandboxes';
export const SANDBOX_BLOBS = 'dsh_fs_sandbox_blobs';
export const SANDBOX_JOURNAL = 'dsh_fs_sandbox_journal';
export const AUDIT = 'dsh_fs_audit';
export const FEEDBACK = 'dsh_fs_review_feedback';

/**
 * The audit log (a table added without a version change: older readers never look at it) has one
 * row per tool call, keyed by workspace and sandbox ('' when served directly), in order of `seq`.
 * So has the review feedback: the reasons of rejected hunks waiting for a sandbox's agent, a JSON
 * text per row in order of `seq`.
 *
 * One row per entry of a workspace. `parent` and `name` split the key once, when it is written,
 * so a listing is one range of an index; the root `/` has the parent ''.
 */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS ${META} (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ${ENTRIES} (
  workspace TEXT NOT NULL,
  path TEXT NOT NULL,
  parent TEXT NOT NULL,
  name TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('file', 'directory', 'link')),
  bytes BLOB,
  version TEXT,
  executable INTEGER NOT NULL DEFAULT 0,
  link TEXT,
  mtime REAL,
  PRIMARY KEY (workspace, path)
);
CREATE INDEX IF NOT EXISTS ${ENTRIES}_parent ON ${ENTRIES} (workspace, parent, name);
CREATE TABLE IF NOT EXISTS ${SANDBOXES} (
  sandbox TEXT PRIMARY KEY,
  state BLOB,
  revision INTEGER NOT NULL DEFAULT 0,
  holder TEXT,
  fork_state BLOB,
  fork_journal BLOB
);
CREATE TABLE IF NOT EXISTS ${SANDBOX_BLOBS} (
  sandbox TEXT NOT NULL,
  id TEXT NOT NULL,
  bytes BLOB NOT NULL,
  PRIMARY KEY (sandbox, id)
);
CREATE TABLE IF NOT EXISTS ${SANDBOX_JOURNAL} (
  sandbox TEXT NOT NULL,
  pos INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  PRIMARY KEY (sandbox, pos)
);
CREATE TABLE IF NOT EXISTS ${AUDIT} (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace TEXT NOT NULL,
  sandbox TEXT NOT NULL DEFAULT '',
  time TEXT NOT NULL,
  owner TEXT,
  tool TEXT NOT NULL,
  outcome TEXT NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ${AUDIT}_key ON ${AUDIT} (workspace, sandbox, seq);
CREATE TABLE IF NOT EXISTS ${FEEDBACK} (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  sandbox TEXT NOT NULL,
  item TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ${FEEDBACK}_key ON ${FEEDBACK} (sandbox, seq);
`;

/** Throws when the file was made by a newer dsh-fs (or is not a dsh-fs file at all). */
export function checkVersion(found: string | undefined, where: string): void {
  if (found === undefined) return;
  const n = Number(found);
  if (!Number.isInteger(n) || n < 1) throw new FsError('FS_IO_ERROR', `${where} has an unreadable dsh-fs schema version "${found}"`);
  if (n > SCHEMA_VERSION) {
    throw new FsError('FS_UNSUPPORTED', `${where} uses dsh-fs schema version ${n}; this dsh-fs knows version ${SCHEMA_VERSION} at most, so upgrade dsh-fs`);
  }
}
