/**
 * The provider's `modify`: a read-modify-write under the file's row lock, in one transaction, so
 * that writers of one file queue on the server instead of racing and retrying.
 */
import { FsError, FsVersion, observe, type FsCurrent, type FsSwapResult } from '../../seam/index.js';
import { MAX_ATTEMPTS, type Q } from './client.js';
import { blobSql, bytesContent, chunksCte, contentParam, wholeContent } from './content.js';
import { insertFile, toUint8 } from './rows.js';
import { ENTRIES } from './schema.js';

export interface ModifyTable {
  readonly ws: string;
  readonly root: string;
  readonly maxFileBytes: number;
  /** Where a link at `key` leads now, or undefined when it leads to no other key. */
  redirect(q: Q, key: string): Promise<string | undefined>;
}

/**
 * Runs inside a transaction. The row is locked `FOR NO KEY UPDATE`: every other writer of the
 * file (a swap's UPDATE or DELETE, another modify, a rename) waits for this transaction, while
 * inserts of children elsewhere, which only key-share their parent's row, do not. An absent file
 * has no row to lock: it is inserted, and when another writer created it first, the new row is
 * locked and the change made again on it. Links are followed, as `read` follows them.
 */
export async function modifyAt(
  q: Q,
  table: ModifyTable,
  key: string,
  maxBytes: number,
  change: (current: FsCurrent | undefined) => Uint8Array,
  what: string,
): Promise<FsSwapResult> {
  let hops = 0;
  for (let created = 0; created < MAX_ATTEMPTS; ) {
    // The row is locked first and its chunks read by a second statement: a statement that waited
    // for the lock sees the row as committed since, but its chunks only as of its own start.
    const rows = await q(`SELECT kind, version, size::float8 AS size, blob::text AS blob FROM ${ENTRIES} WHERE workspace = $1 AND path = $2 FOR NO KEY UPDATE`, [
      table.ws,
      key,
    ]);
    const row = rows[0];
    if (row?.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: it is a directory`);
    if (row?.kind === 'symlink') {
      const next = await table.redirect(q, key);
      if (next === undefined) {
        change(undefined); // an edit says FS_NOT_FOUND, as after a read of the dangling link
        throw new FsError('FS_IO_ERROR', `${what}: a symbolic link that does not resolve is in the way`);
      }
      if (++hops > MAX_ATTEMPTS) throw new FsError('FS_IO_ERROR', `${what}: too many levels of symbolic links`);
      key = next;
      continue;
    }
    if (row !== undefined) {
      if (row.size > maxBytes) throw new FsError('FS_TOO_LARGE', `${what}: the existing file is ${row.size} bytes, over the ${maxBytes}-byte limit`);
      const [{ content: old }] = await q(`SELECT ${wholeContent('$1::bigint')} AS content`, [row.blob]);
      const content = bytesContent(checked(change({ bytes: toUint8(old), version: FsVersion(row.version) }), table, what));
      await q(
        `WITH upd AS (UPDATE ${ENTRIES} SET blob = ${blobSql(content, 3)}, version = $4, size = $5, mtime = now()
           WHERE workspace = $1 AND path = $2 RETURNING blob)${chunksCte(content, 'upd', 3)}
         SELECT 1 FROM upd`,
        [table.ws, key, contentParam(content), content.version, content.size],
      );
      return { ok: true, existed: true, version: content.version };
    }
    const content = bytesContent(checked(change(undefined), table, what));
    if (await insertFile(q, table.ws, table.root, key, content, what)) return { ok: true, existed: false, version: content.version };
    created++; // another writer created it since the SELECT: lock that row and go again
  }
  // Entries keep appearing and going at this name: report what is there; the seam calls again after a pause.
  const now = (await q(`SELECT version FROM ${ENTRIES} WHERE workspace = $1 AND path = $2 AND kind = 'file'`, [table.ws, key]))[0];
  return { ok: false, current: observe(now === undefined ? undefined : { version: FsVersion(now.version) }) };
}

function checked(bytes: Uint8Array, table: ModifyTable, what: string): Uint8Array {
  if (bytes.byteLength > table.maxFileBytes) {
    throw new FsError('FS_TOO_LARGE', `${what}: ${bytes.byteLength} bytes exceeds the ${table.maxFileBytes}-byte limit of this PostgreSQL workspace (its maxFileBytes option)`);
  }
  return bytes;
}
