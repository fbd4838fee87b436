/** The provider's `listDir`: a directory and its children in one query. */
import { posix } from 'node:path';
import { FsError, FsTargetKey, type FsDirEntry, type FsListOptions, type FsTarget } from '../../seam/index.js';
import { MAX_ATTEMPTS, type Q } from './client.js';
import type { PgContext } from './provider-context.js';
import { getRow } from './provider-resolve.js';
import { COLUMNS, type Row } from './rows.js';
import { ENTRIES } from './schema.js';

/** A listing entry for a child row: a link is typed by what it leads to (P4), `other` when that is nothing. */
export async function entryOf(ctx: PgContext, q: Q, parent: FsTarget, row: Row, name: string): Promise<FsDirEntry> {
  const displayPath = posix.join(parent.displayPath, name);
  let key = row.path;
  let target: Row | undefined = row;
  if (row.kind === 'symlink') {
    // A link that dangles, loops or leaves the root is listed, never followed.
    const next = await ctx.redirect(q, row.path).catch(() => undefined);
    target = next === undefined ? undefined : await getRow(q, ctx.ws, next);
    if (next !== undefined) key = next;
  }
  const type = target?.kind === 'file' ? 'file' : target?.kind === 'directory' ? 'directory' : 'other';
  return {
    name,
    type,
    target: { targetKey: FsTargetKey(key), displayPath },
    ...(type === 'file' ? { size: target!.size!, executable: target!.executable === true } : {}),
    ...(target?.mtime_ms != null ? { mtimeMs: target.mtime_ms } : {}),
  };
}

/** The directory at `key` (following a link that appeared there), or the listing error. */
async function directoryKey(ctx: PgContext, q: Q, key: string, what: string, rows: Row[]): Promise<string | undefined> {
  const self = rows.find((r) => r.path === key);
  if (self === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (self.kind === 'file') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
  if (self.kind === 'directory') return undefined;
  const next = await ctx.redirect(q, key);
  if (next === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  return next;
}

export async function listDir(ctx: PgContext, target: FsTarget, { signal }: FsListOptions): Promise<FsDirEntry[]> {
  await ctx.ready(signal);
  const what = `cannot list "${target.displayPath}"`;
  return ctx.db.session(what, signal, async (q) => {
    let key: string = target.targetKey;
    for (let hop = 0; hop < MAX_ATTEMPTS; hop++) {
      // The directory and its children in one query, in any order: the seam orders listings.
      // (UNION ALL rather than OR: two plain index scans, measured 2.7× faster than a bitmap OR on PGlite.)
      const rows = (await q(
        `SELECT ${COLUMNS} FROM ${ENTRIES} WHERE workspace = $1 AND path = $2
         UNION ALL SELECT ${COLUMNS} FROM ${ENTRIES} WHERE workspace = $1 AND parent = $2`,
        [ctx.ws, key],
      )) as Row[];
      const next = await directoryKey(ctx, q, key, what, rows);
      if (next !== undefined) {
        key = next;
        continue;
      }
      const start = key === '/' ? 1 : key.length + 1;
      const children = rows.filter((r) => r.path !== key);
      const entries: FsDirEntry[] = [];
      for (const row of children) entries.push(await entryOf(ctx, q, target, row, row.path.slice(start)));
      return entries;
    }
    throw new FsError('FS_IO_ERROR', `${what}: too many levels of symbolic links`);
  });
}
