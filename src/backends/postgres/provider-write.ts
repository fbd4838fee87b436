/** The provider's writes to files: `swap`, `modify`, `applyBatch` and `setExecutable`. */
import {
  FsError,
  FsVersion,
  expectHolds,
  observe,
  type FsBatchResult,
  type FsBatchSwap,
  type FsCurrent,
  type FsExpect,
  type FsModifyRequest,
  type FsOpOptions,
  type FsSwapRequest,
  type FsSwapResult,
  type FsTarget,
} from '../../seam/index.js';
import { applyBatchIn } from './batch.js';
import { MAX_ATTEMPTS, RETRYABLE, sqlState, type Q } from './client.js';
import { setExecutableAt } from './modes.js';
import { modifyAt } from './modify.js';
import type { PgContext } from './provider-context.js';
import { getRow, resolveKey } from './provider-resolve.js';
import { blobSql, bytesContent, chunksCte, contentParam, type NewContent } from './content.js';
import { insertFile } from './rows.js';
import { ENTRIES } from './schema.js';

export async function swap(ctx: PgContext, target: FsTarget, { expect, bytes, signal }: FsSwapRequest): Promise<FsSwapResult> {
  await ctx.ready(signal);
  const what = `cannot write "${target.displayPath}"`;
  if (bytes !== null && bytes.byteLength > ctx.maxFileBytes) {
    throw new FsError('FS_TOO_LARGE', `${what}: ${bytes.byteLength} bytes exceeds the ${ctx.maxFileBytes}-byte limit of this PostgreSQL workspace (its maxFileBytes option)`);
  }
  const content = bytes === null ? null : bytesContent(bytes);
  return ctx.db.session(what, signal, (q) => swapAt(ctx, q, target.targetKey, expect, content, what));
}

/**
 * The swap at `key`: one conditional statement (the row and its new chunks together), then (only
 * when it changed nothing) one read of what is there.
 */
export async function swapAt(ctx: PgContext, q: Q, key: string, expect: FsExpect, content: NewContent | null, what: string): Promise<FsSwapResult> {
  const { ws, root } = ctx;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    try {
      if (content !== null && expect.kind !== 'absent') {
        const guard = expect.kind === 'present' ? ' AND version = $6' : '';
        const rows = await q(
          `WITH upd AS (UPDATE ${ENTRIES} SET blob = ${blobSql(content, 3)}, version = $4, size = $5, mtime = now()
             WHERE workspace = $1 AND path = $2 AND kind = 'file'${guard} RETURNING blob)${chunksCte(content, 'upd', 3)}
           SELECT 1 FROM upd`,
          [ws, key, contentParam(content), content.version, content.size, ...(expect.kind === 'present' ? [expect.version] : [])],
        );
        if (rows.length > 0) return { ok: true, existed: true, version: content.version };
      }
      if (content !== null && expect.kind !== 'present') {
        if (await insertFile(q, ws, root, key, content, what)) return { ok: true, existed: false, version: content.version };
      }
      if (content === null && expect.kind !== 'absent') {
        const guard = expect.kind === 'present' ? ' AND version = $3' : '';
        const rows = await q(
          `DELETE FROM ${ENTRIES} WHERE workspace = $1 AND path = $2 AND kind = 'file'${guard} RETURNING 1`,
          [ws, key, ...(expect.kind === 'present' ? [expect.version] : [])],
        );
        if (rows.length > 0) return { ok: true, existed: true };
      }
    } catch (err) {
      if (attempt < MAX_ATTEMPTS && RETRYABLE.has(sqlState(err) ?? '')) continue;
      throw err;
    }
    // Nothing changed: report what is there (G7), or go again if the state moved in between.
    const row = await getRow(q, ws, key);
    if (row?.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: it is a directory`);
    if (row?.kind === 'symlink') {
      const next = await resolveKey(q, ctx, key);
      if (next === key) throw new FsError('FS_IO_ERROR', `${what}: a symbolic link that does not resolve is in the way`);
      key = next;
      continue;
    }
    const current = row === undefined ? undefined : { version: FsVersion(row.version!) };
    if (!expectHolds(expect, current)) return { ok: false, current: observe(current) };
    if (content === null && current === undefined) return { ok: true, existed: false };
  }
  throw new FsError('FS_IO_ERROR', `${what}: the entry kept changing under concurrent writers; try again`);
}

export async function modify(
  ctx: PgContext,
  target: FsTarget,
  { maxBytes, signal }: FsModifyRequest,
  change: (current: FsCurrent | undefined) => Uint8Array,
): Promise<FsSwapResult> {
  await ctx.ready(signal);
  const what = `cannot write "${target.displayPath}"`;
  return ctx.db.transaction(what, signal, (q) => modifyAt(q, ctx, target.targetKey, maxBytes, change, what));
}

export async function applyBatch(ctx: PgContext, swaps: readonly FsBatchSwap[], { signal }: FsOpOptions): Promise<FsBatchResult> {
  await ctx.ready(signal);
  return applyBatchIn(ctx.db, ctx, swaps, signal);
}

export async function setExecutable(ctx: PgContext, target: FsTarget, executable: boolean, { signal }: FsOpOptions): Promise<void> {
  await ctx.ready(signal);
  const what = `cannot change the mode of "${target.displayPath}"`;
  await ctx.db.session(what, signal, (q) => setExecutableAt(q, ctx, target.targetKey, executable, what));
}
