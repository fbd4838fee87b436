/** The provider's links (K1): a row of kind 'symlink' holding the link text. */
import { FsError } from '../../seam/index.js';
import type { Q } from './client.js';
import { parentOf } from './rows.js';
import { ENTRIES } from './schema.js';

/** Inserts the link row; its parent must be a directory row already. */
export async function insertLink(q: Q, ws: string, key: string, linkText: string, what: string): Promise<void> {
  const parent = parentOf(key);
  if (parent === null) throw new FsError('FS_ALREADY_EXISTS', `${what}: it is the root`);
  const rows = await q(
    `WITH p AS (SELECT kind FROM ${ENTRIES} WHERE workspace = $1 AND path = $3),
     ins AS (INSERT INTO ${ENTRIES} (workspace, path, parent, kind, link)
       SELECT $1, $2, $3, 'symlink', $4 WHERE EXISTS (SELECT 1 FROM p WHERE kind = 'directory')
       ON CONFLICT (workspace, path) DO NOTHING RETURNING 1)
     SELECT (SELECT count(*) FROM ins)::int AS inserted, (SELECT kind FROM p) AS parent_kind`,
    [ws, key, parent, linkText],
  );
  const row = rows[0] as { inserted: number; parent_kind: string | null };
  if (row.inserted === 1) return;
  if (row.parent_kind === null) throw new FsError('FS_NOT_FOUND', `${what}: the parent directory does not exist`);
  if (row.parent_kind !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `${what}: the parent is not a directory`);
  throw new FsError('FS_ALREADY_EXISTS', `${what}: something is already there`);
}

export async function readLink(q: Q, ws: string, key: string, what: string): Promise<string> {
  const rows = await q(`SELECT kind, link FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`, [ws, key]);
  const row = rows[0] as { kind: string; link: string | null } | undefined;
  if (row === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (row.kind !== 'symlink' || row.link === null) throw new FsError('FS_INVALID_ARGUMENT', `${what}: not a symbolic link`);
  return row.link;
}
