/** The provider's writes to files: `swap`, `modify`, `applyBatch` and `setExecutable`. */
import {
  FsError,
  FsVersion,
  contentVersion,
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
import { insertFile, toBuffer } from './rows.js';
import { ENTRIES } from './schema.js';

export async function swap(ctx: PgContext, target: FsTarget, { expect, bytes, signal }: FsSwapRequest): Promise<FsSwapResult> {
  await ctx.ready(signal);
  const what = `cannot write "${target.displayPath}"`;
  if (bytes !== null && bytes.byteLength > ctx.maxFileBytes) {
    throw new FsError('FS_TOO_LARGE', `${what}: ${bytes.byteLength} bytes exceeds the ${ctx.maxFileBytes}-byte limit of this PostgreSQL workspace`);
  }
  return ctx.db.session(what, signal, (q) => swapAt(ctx, q, target.targetKey, expect, bytes, what));
}

/** The swap at `key`: one conditional statement, then (only when it changed nothing) one read of what is there. */
async function swapAt(ctx: PgContext, q: Q, key: string, expect: FsExpect, bytes: Uint8Array | null, what: string): Promise<FsSwapResult> {
  const { ws, root } = ctx;
  const version = bytes === null ? undefined : contentVersion(bytes);
  const content = bytes === null ? undefined : toBuffer(bytes);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    try {
      if (bytes !== null && expect.kind !== 'absent') {
        const guard = expect.kind === 'present' ? ' AND version = $6' : '';
        const rows = await q(
          `UPDATE ${ENTRIES} SET content = $3, version = $4, size = $5, mtime = now()
           WHERE workspace = $1 AND path = $2 AND kind = 'file'${guard} RETURNING 1`,
          [ws, key, content, version, bytes.byteLength, ...(expect.kind === 'present' ? [expect.version] : [])],
        );
        if (rows.length > 0) return { ok: true, existed: true, version: version! };
      }
      if (bytes !== null && expect.kind !== 'present') {
        if (await insertFile(q, ws, root, key, bytes, version!, what)) return { ok: true, existed: false, version: version! };
      }
      if (bytes === null && expect.kind !== 'absent') {
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
    if (bytes === null && current === undefined) return { ok: true, existed: false };
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
