/** The provider's `setExecutable`: the bit is a column of the file's row (schema version 3). */
import { FsError } from '../../seam/index.js';
import { MAX_ATTEMPTS, type Q } from './client.js';
import { ENTRIES } from './schema.js';

export interface ModeTable {
  readonly ws: string;
  /** Where a link at `key` leads now, or undefined when it leads to no other key. */
  redirect(q: Q, key: string): Promise<string | undefined>;
}

/** One UPDATE of a file's row; a link is followed, as `read` follows it. */
export async function setExecutableAt(q: Q, table: ModeTable, key: string, executable: boolean, what: string): Promise<void> {
  let at = key;
  for (let hop = 0; hop < MAX_ATTEMPTS; hop++) {
    const rows = await q(
      `WITH upd AS (UPDATE ${ENTRIES} SET executable = $3 WHERE workspace = $1 AND path = $2 AND kind = 'file' RETURNING kind)
       SELECT kind FROM upd UNION ALL SELECT kind FROM ${ENTRIES} WHERE workspace = $1 AND path = $2 AND kind <> 'file'`,
      [table.ws, at, executable],
    );
    const kind = rows[0]?.kind as string | undefined;
    if (kind === 'file') return;
    if (kind === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    if (kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
    const next = await table.redirect(q, at);
    if (next === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    at = next;
  }
  throw new FsError('FS_IO_ERROR', `${what}: too many levels of symbolic links`);
}
