/** The provider's lookups: `resolve`, and `stat` and `read` (one row each, a link followed to where it leads now). */
import {
  FsError,
  FsTargetKey,
  FsVersion,
  type FsCurrent,
  type FsProviderInfo,
  type FsOpOptions,
  type FsProviderReadOptions,
  type FsTarget,
} from '../../seam/index.js';
import { MAX_ATTEMPTS } from './client.js';
import type { PgContext } from './provider-context.js';
import { wholeContent } from './content.js';
import { getRow, resolveKey } from './provider-resolve.js';
import { toUint8 } from './rows.js';
import { ENTRIES } from './schema.js';

export async function resolve(ctx: PgContext, path: string, { signal }: FsOpOptions): Promise<FsTarget> {
  await ctx.ready(signal);
  const key = await ctx.db.session(`cannot resolve "${path}"`, signal, (q) => resolveKey(q, ctx, path));
  return { targetKey: FsTargetKey(key), displayPath: path };
}

export async function stat(ctx: PgContext, target: FsTarget, { signal }: FsOpOptions): Promise<FsProviderInfo | undefined> {
  await ctx.ready(signal);
  return ctx.db.session(`cannot stat "${target.displayPath}"`, signal, async (q) => {
    let row = await getRow(q, ctx.ws, target.targetKey);
    if (row?.kind === 'symlink') {
      const next = await ctx.redirect(q, row.path);
      row = next === undefined ? undefined : await getRow(q, ctx.ws, next);
    }
    if (row === undefined) return undefined;
    if (row.kind === 'file') return { type: 'file', version: FsVersion(row.version!), size: row.size!, mtimeMs: row.mtime_ms!, executable: row.executable === true };
    if (row.kind === 'directory') return { type: 'directory', mtimeMs: row.mtime_ms! };
    return { type: 'other' };
  });
}

export async function read(ctx: PgContext, target: FsTarget, { maxBytes, signal }: FsProviderReadOptions): Promise<FsCurrent> {
  await ctx.ready(signal);
  const what = `cannot read "${target.displayPath}"`;
  return ctx.db.session(what, signal, async (q) => {
    let key: string = target.targetKey;
    for (let hop = 0; hop < MAX_ATTEMPTS; hop++) {
      // The size is checked in the same statement, before the content is gathered; one statement
      // sees the row and its chunks at one moment, so they always agree.
      const rows = await q(
        `SELECT kind, version, size::float8 AS size, link,
           CASE WHEN kind = 'file' AND ($3::float8 IS NULL OR size <= $3::float8) THEN ${wholeContent('e.blob')} END AS content
         FROM ${ENTRIES} e WHERE workspace = $1 AND path = $2`,
        [ctx.ws, key, Number.isFinite(maxBytes) ? maxBytes : null],
      );
      const row = rows[0];
      if (row === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (row.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
      if (row.kind === 'symlink') {
        const next = await ctx.redirect(q, key);
        if (next === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
        key = next;
        continue;
      }
      if (row.content == null) throw new FsError('FS_TOO_LARGE', `${what}: ${row.size} bytes exceeds the ${maxBytes}-byte limit`);
      return { bytes: toUint8(row.content), version: FsVersion(row.version) };
    }
    throw new FsError('FS_IO_ERROR', `${what}: too many levels of symbolic links`);
  });
}
