/** The provider's links (K1): a row of kind 'symlink' holding the link text. */
import { FsError } from '../../seam/index.js';
import type { Q } from './client.js';
import { parentOf } from './rows.js';
import { ENTRIES } from './schema.js';

/** Inserts the link row; its parent must be a directory row already. */
export async function insertLink(q: Q, ws: string, key: string, linkText: string, what: string): Promise<void> {
  const parent = parentOf(key);
  if (parent === null) throw new FsError('FS_ALREADY_EXISTS', `${what}: something is already there`);
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

/** Deletes the link row at `key` (K2); anything else there is left and refused. */
export async function deleteLink(q: Q, ws: string, key: string, what: string): Promise<void> {
  const rows = await q(`DELETE FROM ${ENTRIES} WHERE workspace = $1 AND path = $2 AND kind = 'symlink' RETURNING 1`, [ws, key]);
  if (rows.length === 1) return;
  await readLink(q, ws, key, what); // says why: absent, or not a link
}

/**
 * Moves the link row at `from` to `to` in the caller's transaction (K2): the rows are locked, a
 * file or link at `to` is deleted when `replace` allows, and the link is inserted there again.
 */
export async function moveLink(q: Q, ws: string, from: string, to: string, replace: boolean, what: string): Promise<void> {
  const rows = await q(`SELECT path, kind, link FROM ${ENTRIES} WHERE workspace = $1 AND path IN ($2, $3) FOR UPDATE`, [ws, from, to]);
  const row = (path: string) => (rows as { path: string; kind: string; link: string | null }[]).find((r) => r.path === path);
  const src = row(from);
  if (src === undefined) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
  if (src.kind !== 'symlink' || src.link === null) throw new FsError('FS_INVALID_ARGUMENT', `${what}: the source is not a symbolic link`);
  if (from === to) return;
  const dst = row(to);
  if (dst !== undefined && !replace) throw new FsError('FS_ALREADY_EXISTS', `${what}: the destination exists`);
  if (dst?.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the destination is a directory`);
  await q(`DELETE FROM ${ENTRIES} WHERE workspace = $1 AND path IN ($2, $3)`, [ws, from, to]);
  await insertLink(q, ws, to, src.link, what);
}
