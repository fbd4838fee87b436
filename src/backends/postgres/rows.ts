/** The entries table as the provider's statements see it: row shape, shared SQL, path arithmetic. */
import { posix } from 'node:path';
import { FsError, isWithin } from '../../seam/index.js';
import { MAX_ATTEMPTS, RETRYABLE, sqlState, type Q } from './client.js';
import { blobSql, chunksCte, contentParam, type NewContent } from './content.js';
import { ENTRIES } from './schema.js';

export interface Row {
  path: string;
  kind: 'file' | 'directory' | 'symlink';
  version: string | null;
  size: number | null;
  mtime_ms: number | null;
  link: string | null;
  executable: boolean;
}

export const COLUMNS = `path, kind, version, size::float8 AS size, (extract(epoch FROM mtime) * 1000)::float8 AS mtime_ms, link, executable`;

/**
 * Missing directories, as a CTE prefix: `want` ($2 paths, $3 parents) are inserted unless one of
 * them exists as something other than a directory, which `bad` then names.
 */
export const ENSURE_DIRS = `want AS (SELECT w.path, w.parent FROM unnest($2::text[], $3::text[]) AS w(path, parent)),
  bad AS (SELECT e.path, e.kind FROM ${ENTRIES} e JOIN want w ON e.path = w.path WHERE e.workspace = $1 AND e.kind <> 'directory'),
  dirs AS (INSERT INTO ${ENTRIES} (workspace, path, parent, kind)
    SELECT $1, path, parent, 'directory' FROM want WHERE NOT EXISTS (SELECT 1 FROM bad)
    ON CONFLICT (workspace, path) DO NOTHING)`;

/**
 * Creates the file at `key` with its missing parent directories and its chunks, in one statement.
 * False when an entry is already there (nothing changed); FS_NOT_DIRECTORY when a parent is not a directory.
 */
export async function insertFile(q: Q, ws: string, root: string, key: string, content: NewContent, what: string): Promise<boolean> {
  const dirs = dirsBetween(root, key);
  const rows = await q(
    `WITH ${ENSURE_DIRS},
     ins AS (INSERT INTO ${ENTRIES} (workspace, path, parent, kind, blob, version, size)
       SELECT $1, $4, $5, 'file', ${blobSql(content, 6)}, $7, $8 WHERE NOT EXISTS (SELECT 1 FROM bad)
       ON CONFLICT (workspace, path) DO NOTHING RETURNING blob)${chunksCte(content, 'ins', 6)}
     SELECT 'inserted' AS path, 'file' AS kind FROM ins UNION ALL SELECT path, kind FROM bad`,
    [ws, dirs, dirs.map(parentOf), key, parentOf(key), contentParam(content), content.version, content.size],
  );
  const bad = rows.find((r) => r.path !== 'inserted');
  if (bad) throw notDirectory(what, bad);
  return rows.length > 0;
}

/** D1: directories (each with its parent before it); something else in the way is FS_NOT_DIRECTORY. */
export async function ensureDirs(q: Q, ws: string, paths: string[], what: string): Promise<void> {
  if (paths.length === 0) return;
  for (let attempt = 1; ; attempt++) {
    try {
      const bad = await q(`WITH ${ENSURE_DIRS} SELECT path, kind FROM bad`, [ws, paths, paths.map(parentOf)]);
      if (bad.length > 0) throw notDirectory(what, bad[0]);
      return;
    } catch (err) {
      // A concurrent rmdir removed a parent between our insert and its foreign-key check.
      if (attempt < MAX_ATTEMPTS && RETRYABLE.has(sqlState(err) ?? '')) continue;
      throw err;
    }
  }
}

export function notDirectory(what: string, row: { path: string; kind: string }): FsError {
  return new FsError('FS_NOT_DIRECTORY', `${what}: "${row.path}" is a ${row.kind === 'symlink' ? 'symbolic link' : row.kind}, not a directory`);
}

export function parentOf(path: string): string | null {
  return path === '/' ? null : posix.dirname(path);
}

/** `/a/b/c` → `/`, `/a`, `/a/b`, `/a/b/c`. */
export function selfAndAncestors(path: string): string[] {
  const out = ['/'];
  let at = '';
  for (const seg of path.split('/').filter((s) => s !== '')) out.push((at = `${at}/${seg}`));
  return out;
}

/** Strict ancestors of `path`, from `/` down. */
export function strictAncestors(path: string): string[] {
  return path === '/' ? [] : selfAndAncestors(path).slice(1, -1);
}

/** The directories strictly between `root` and `path`: the parents a write to `path` may have to create. */
export function dirsBetween(root: string, path: string): string[] {
  return selfAndAncestors(path).slice(0, -1).filter((p) => p !== root && isWithin(root, p));
}

/** The bytewise range of every path strictly below `dir`: [prefix, upper). */
export function subtree(dir: string): { prefix: string; upper: string } {
  const prefix = dir === '/' ? '/' : `${dir}/`;
  return { prefix, upper: `${prefix.slice(0, -1)}0` }; // '0' is the byte after '/'
}

export function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function toUint8(value: Uint8Array): Uint8Array {
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}
