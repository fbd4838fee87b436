/**
 * The tables, created on first use and versioned for later migrations. Several processes may
 * start at once: creation runs under a transaction-scoped advisory lock, and a duplicate-object
 * error from an engine without advisory locks is taken as "someone else created it" and retried.
 */
import { FsError } from '../../seam/index.js';
import { sqlState, type Db } from './client.js';

/**
 * 1: entries. 2: adds the tables of overlay uppers kept in the database (sandboxes). 3: a file's
 * executable bit. 4: the audit log. 5: the change feed's trigger. 6: file content in chunks (one
 * row per MiB) instead of one value per file.
 */
export const SCHEMA_VERSION = 7;
export const ENTRIES = 'dsh_fs_entries';
export const CHUNKS = 'dsh_fs_chunks';
/** The sequence every new content of a file takes its blob id from. */
export const BLOB_IDS = 'dsh_fs_blob_ids';
/** The size of every chunk but a file's last (the migration and `swap` split at it; a reader takes any size). */
export const CHUNK_BYTES = 1024 * 1024;
export const META = 'dsh_fs_meta';
export const SANDBOXES = 'dsh_fs_sandboxes';
export const SANDBOX_BLOBS = 'dsh_fs_sandbox_blobs';
export const SANDBOX_JOURNAL = 'dsh_fs_sandbox_journal';
export const AUDIT = 'dsh_fs_audit';
export const FEEDBACK = 'dsh_fs_review_feedback';
/** Any constant: the advisory lock every dsh-fs process takes while creating or migrating the schema. */
const SCHEMA_LOCK = 0x64736866; // 'dshf'

/**
 * One row per entry. Paths sort bytewise (COLLATE "C"), so a subtree is one index range. The
 * foreign key makes the database itself keep the tree whole: every entry's parent is a row of
 * kind 'directory' in the same workspace (parent_kind is always 'directory'), so a file cannot
 * appear below a file, a non-empty directory cannot be deleted, and a directory deleted while a
 * child is being inserted makes one of the two statements fail (and be retried) instead of
 * leaving an orphan.
 */
const CREATE_V1 = [
  `CREATE TABLE ${ENTRIES} (
    workspace   text NOT NULL,
    path        text COLLATE "C" NOT NULL,
    parent      text COLLATE "C",
    parent_kind text NOT NULL DEFAULT 'directory' CHECK (parent_kind = 'directory'),
    kind        text NOT NULL CHECK (kind IN ('file', 'directory', 'symlink')),
    content     bytea,
    link        text,
    version     text,
    size        integer,
    mtime       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace, path),
    UNIQUE (workspace, path, kind),
    FOREIGN KEY (workspace, parent, parent_kind) REFERENCES ${ENTRIES} (workspace, path, kind),
    CHECK ((parent IS NULL) = (path = '/')),
    CHECK ((kind = 'file') = (content IS NOT NULL AND version IS NOT NULL AND size IS NOT NULL)),
    CHECK ((kind = 'symlink') = (link IS NOT NULL))
  )`,
  `CREATE INDEX ${ENTRIES}_parent ON ${ENTRIES} (workspace, parent, path)`,
];

/**
 * An overlay's upper layer (the UpperStore seam), one sandbox per name: its state document, its
 * journal as chunks keyed by byte offset (an append writes one row, whatever the journal's size),
 * and its content-addressed blobs. `revision` grows with every change of document or journal, so
 * a reader can tell cheaply whether another process changed the sandbox.
 */
const CREATE_V2 = [
  `CREATE TABLE ${SANDBOXES} (
    sandbox  text PRIMARY KEY,
    state    bytea,
    revision bigint NOT NULL DEFAULT 0,
    created  timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE ${SANDBOX_JOURNAL} (
    sandbox text NOT NULL REFERENCES ${SANDBOXES} (sandbox) ON DELETE CASCADE,
    pos     bigint NOT NULL CHECK (pos >= 0),
    bytes   bytea NOT NULL,
    PRIMARY KEY (sandbox, pos)
  )`,
  `CREATE TABLE ${SANDBOX_BLOBS} (
    sandbox text NOT NULL REFERENCES ${SANDBOXES} (sandbox) ON DELETE CASCADE,
    id      text NOT NULL,
    bytes   bytea NOT NULL,
    PRIMARY KEY (sandbox, id)
  )`,
];

/** The executable bit of a file (X1); existing rows are not executable. */
const CREATE_V3 = [`ALTER TABLE ${ENTRIES} ADD COLUMN executable boolean NOT NULL DEFAULT false`];

/**
 * The audit log: one row per tool call, keyed by workspace and sandbox ('' when the workspace is
 * served directly), in the order appended (seq). The record is the JSON text as written; the
 * columns repeat what queries select by.
 */
const CREATE_V4 = [
  `CREATE TABLE ${AUDIT} (
    workspace text NOT NULL,
    sandbox   text NOT NULL DEFAULT '',
    seq       bigserial,
    time      text NOT NULL,
    owner     text,
    tool      text NOT NULL,
    outcome   text NOT NULL,
    record    text NOT NULL,
    PRIMARY KEY (workspace, sandbox, seq)
  )`,
  `CREATE INDEX ${AUDIT}_time ON ${AUDIT} (workspace, sandbox, time)`,
];

/** The channel of a workspace's change feed: a digest, as channel names are at most 63 bytes. */
export const FEED_CHANNEL_SQL = `'dsh_fs_' || left(md5(ws), 24)`;

/**
 * The change feed (docs/feed.md): every committed change of a row is announced with NOTIFY on its
 * workspace's channel, in commit order, whoever made it (any process, any version of dsh-fs,
 * plain SQL). The payload is JSON: k(ind), p(ath), f(rom), v(ersion); one too long for NOTIFY
 * becomes an overflow.
 */
const CREATE_V5 = [
  `CREATE OR REPLACE FUNCTION dsh_fs_feed() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    ws text;
    payload text;
  BEGIN
    IF TG_OP = 'DELETE' THEN
      ws := OLD.workspace;
      payload := json_build_object('k', CASE WHEN OLD.kind = 'directory' THEN 'rmdir' ELSE 'remove' END, 'p', OLD.path)::text;
    ELSE
      ws := NEW.workspace;
      IF TG_OP = 'UPDATE' AND NEW.path IS DISTINCT FROM OLD.path THEN
        payload := json_build_object('k', 'rename', 'p', NEW.path, 'f', OLD.path, 'v', NEW.version)::text;
      ELSIF TG_OP = 'UPDATE' AND NEW.kind = OLD.kind AND NEW.version IS NOT DISTINCT FROM OLD.version
            AND NEW.executable IS DISTINCT FROM OLD.executable THEN
        payload := json_build_object('k', 'mode', 'p', NEW.path)::text;
      ELSE
        payload := json_build_object('k', CASE NEW.kind WHEN 'directory' THEN 'mkdir' WHEN 'symlink' THEN 'link' ELSE 'write' END,
                                     'p', NEW.path, 'v', NEW.version)::text;
      END IF;
    END IF;
    IF octet_length(payload) > 7900 THEN
      payload := '{"k":"overflow","p":"/"}';
    END IF;
    PERFORM pg_notify(${FEED_CHANNEL_SQL}, payload);
    RETURN NULL;
  END $$`,
  `CREATE TRIGGER dsh_fs_entries_feed AFTER INSERT OR UPDATE OR DELETE ON ${ENTRIES}
     FOR EACH ROW EXECUTE PROCEDURE dsh_fs_feed()`,
];

/**
 * A file's content as chunks: each content ever published is a blob (an id from BLOB_IDS, never
 * reused) of rows keyed by byte offset, and the file's row names its blob. A write stores a new
 * blob and points the row at it in one statement; the triggers drop the chunks of a blob no row
 * names any more, whoever deleted or repointed the row. Existing files are converted here, once,
 * in the migration's transaction: no row keeps a single-value content afterwards.
 */
const CREATE_V6 = [
  `CREATE SEQUENCE ${BLOB_IDS}`,
  `CREATE TABLE ${CHUNKS} (
    blob  bigint NOT NULL,
    pos   bigint NOT NULL CHECK (pos >= 0),
    bytes bytea NOT NULL,
    PRIMARY KEY (blob, pos)
  )`,
  `ALTER TABLE ${ENTRIES} ADD COLUMN blob bigint`,
  // A conversion, not a change of any file: the change feed does not announce it.
  `ALTER TABLE ${ENTRIES} DISABLE TRIGGER dsh_fs_entries_feed`,
  `UPDATE ${ENTRIES} SET blob = nextval('${BLOB_IDS}') WHERE kind = 'file'`,
  `ALTER TABLE ${ENTRIES} ENABLE TRIGGER dsh_fs_entries_feed`,
  `INSERT INTO ${CHUNKS} (blob, pos, bytes)
   SELECT e.blob, g.pos, substring(e.content FROM g.pos::int + 1 FOR ${CHUNK_BYTES})
   FROM ${ENTRIES} e, generate_series(0::bigint, octet_length(e.content)::bigint - 1, ${CHUNK_BYTES}) AS g(pos)
   WHERE e.kind = 'file'`,
  // Drops the old CHECK on content with it; a process of an older dsh-fs still writing `content` now fails loudly.
  `ALTER TABLE ${ENTRIES} DROP COLUMN content`,
  `ALTER TABLE ${ENTRIES} ALTER COLUMN size TYPE bigint`,
  `ALTER TABLE ${ENTRIES} ADD CONSTRAINT ${ENTRIES}_file_content CHECK ((kind = 'file') = (blob IS NOT NULL AND version IS NOT NULL AND size IS NOT NULL))`,
  `CREATE OR REPLACE FUNCTION ${CHUNKS}_drop() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN DELETE FROM ${CHUNKS} WHERE blob = OLD.blob; RETURN NULL; END $$`,
  `CREATE TRIGGER ${ENTRIES}_blob_deleted AFTER DELETE ON ${ENTRIES}
   FOR EACH ROW WHEN (OLD.blob IS NOT NULL) EXECUTE FUNCTION ${CHUNKS}_drop()`,
  `CREATE TRIGGER ${ENTRIES}_blob_replaced AFTER UPDATE OF blob ON ${ENTRIES}
   FOR EACH ROW WHEN (OLD.blob IS NOT NULL AND OLD.blob IS DISTINCT FROM NEW.blob) EXECUTE FUNCTION ${CHUNKS}_drop()`,
];

/**
 * The review feedback: the reasons of rejected hunks waiting for a sandbox's agent, a JSON text
 * per row in the order added (seq). Not tied to the sandbox's row: a reason outlives a discard.
 */
const CREATE_V7 = [
  `CREATE TABLE ${FEEDBACK} (
    sandbox text NOT NULL,
    seq     bigserial,
    item    text NOT NULL,
    PRIMARY KEY (sandbox, seq)
  )`,
];

/** What takes a database from each version to the next. */
const MIGRATIONS: Record<number, readonly string[]> = { 1: CREATE_V2, 2: CREATE_V3, 3: CREATE_V4, 4: CREATE_V5, 5: CREATE_V6, 6: CREATE_V7 };

/** Creates or checks the schema; safe to call from many processes at once. */
export async function ensureSchema(db: Db): Promise<void> {
  const what = 'cannot prepare the PostgreSQL schema';
  for (let attempt = 1; ; attempt++) {
    try {
      const found = await db.session(what, undefined, (q) => currentVersion(q));
      if (found === SCHEMA_VERSION) return;
      await db.transaction(what, undefined, async (q) => {
        await q('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
        await q(`CREATE TABLE IF NOT EXISTS ${META} (key text PRIMARY KEY, value text NOT NULL)`);
        const version = await currentVersion(q);
        if (version === SCHEMA_VERSION) return;
        let at = version;
        if (at === undefined) {
          for (const statement of CREATE_V1) await q(statement);
          await q(`INSERT INTO ${META} (key, value) VALUES ('schema_version', '1')`);
          at = 1;
        }
        // Under the lock, in one transaction: a migration runs once, and whole or not at all.
        for (; at < SCHEMA_VERSION; at++) for (const statement of MIGRATIONS[at]!) await q(statement);
        await q(`UPDATE ${META} SET value = $1 WHERE key = 'schema_version'`, [String(SCHEMA_VERSION)]);
      });
      return;
    } catch (err) {
      const code = sqlState((err as { cause?: unknown }).cause ?? err);
      // 42P07 duplicate table, 42710 duplicate object, 23505 a concurrent catalog insert.
      if (attempt < 5 && (code === '42P07' || code === '42710' || code === '23505')) continue;
      throw err;
    }
  }
}

async function currentVersion(q: (text: string, values?: unknown[]) => Promise<any[]>): Promise<number | undefined> {
  let rows: any[];
  try {
    rows = await q(`SELECT value FROM ${META} WHERE key = 'schema_version'`);
  } catch (err) {
    if (sqlState(err) === '42P01') return undefined; // no table yet
    throw err;
  }
  if (rows.length === 0) return undefined;
  const version = Number(rows[0].value);
  if (version > SCHEMA_VERSION) throw newer(version);
  return version;
}

function newer(version: number): FsError {
  return new FsError(
    'FS_IO_ERROR',
    `the database holds dsh-fs schema version ${version}, newer than the ${SCHEMA_VERSION} this version of dsh-fs understands; upgrade dsh-fs`,
  );
}
