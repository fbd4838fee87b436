/** The sandbox's state document, blobs and journal, as the overlay's UpperStore reads and writes them. */
import { FsError } from '../../seam/errors.js';
import { blobOf, type Sql } from './db.js';
import { SANDBOXES, SANDBOX_BLOBS, SANDBOX_JOURNAL } from './schema.js';
import type { UpperContext } from './upper-context.js';
import { read, revisionOf, write } from './upper-session.js';

export const exists = (ctx: UpperContext) =>
  read(ctx, 'cannot read the overlay state', (sql) => sql.get(`SELECT 1 AS x FROM ${SANDBOXES} WHERE sandbox = ? AND state IS NOT NULL`, [ctx.sandbox]) !== undefined);

/** The state document, if any; the first read sets the revision this store knows. */
export const readState = (ctx: UpperContext) =>
  read(ctx, 'cannot read the overlay state', (sql) => {
    const row = sql.get(`SELECT state FROM ${SANDBOXES} WHERE sandbox = ?`, [ctx.sandbox]);
    ctx.basis ??= revisionOf(ctx, sql);
    return row?.state == null ? undefined : blobOf(row.state, 'the overlay state');
  });

export const writeState = (ctx: UpperContext, bytes: Uint8Array) =>
  write(ctx, 'cannot write the overlay state', (sql) => {
    sql.run(`UPDATE ${SANDBOXES} SET state = ? WHERE sandbox = ?`, [bytes, ctx.sandbox]);
    return true;
  });

export const readBlob = (ctx: UpperContext, id: string) =>
  read(ctx, `cannot read overlay blob ${id}`, (sql) => {
    const row = sql.get(`SELECT bytes FROM ${SANDBOX_BLOBS} WHERE sandbox = ? AND id = ?`, [ctx.sandbox, id]);
    return row === undefined ? undefined : blobOf(row.bytes, `overlay blob ${id}`);
  });

/** Named by its digest: a blob already there holds the same bytes. */
export const writeBlob = (ctx: UpperContext, id: string, bytes: Uint8Array) =>
  write(ctx, `cannot write overlay blob ${id}`, (sql) => void sql.run(`INSERT OR IGNORE INTO ${SANDBOX_BLOBS} (sandbox, id, bytes) VALUES (?, ?, ?)`, [ctx.sandbox, id, bytes]));

export const deleteBlob = (ctx: UpperContext, id: string) =>
  write(ctx, `cannot delete overlay blob ${id}`, (sql) => void sql.run(`DELETE FROM ${SANDBOX_BLOBS} WHERE sandbox = ? AND id = ?`, [ctx.sandbox, id]));

export const listBlobs = (ctx: UpperContext) =>
  read(ctx, 'cannot list the overlay blobs', (sql) => sql.all(`SELECT id FROM ${SANDBOX_BLOBS} WHERE sandbox = ? ORDER BY id`, [ctx.sandbox]).map((r) => String(r.id)));

/** The whole journal of `sandbox` (undefined when there is none); a gap between chunks is an error. */
export function journalOf(sql: Sql, sandbox: string, where: string): Uint8Array | undefined {
  const rows = sql.all(`SELECT pos, bytes FROM ${SANDBOX_JOURNAL} WHERE sandbox = ? ORDER BY pos`, [sandbox]);
  if (rows.length === 0) return undefined;
  const chunks = rows.map((r) => blobOf(r.bytes, 'the overlay journal'));
  let at = 0;
  for (const [i, r] of rows.entries()) {
    if (Number(r.pos) !== at) throw new FsError('FS_IO_ERROR', `the overlay journal in ${where} has a gap at byte ${at}`);
    at += chunks[i]!.byteLength;
  }
  const out = new Uint8Array(at);
  let o = 0;
  for (const c of chunks) (out.set(c, o), (o += c.byteLength));
  return out;
}

export const readJournal = (ctx: UpperContext) => read(ctx, 'cannot read the overlay journal', (sql) => journalOf(sql, ctx.sandbox, ctx.where));

/** Replaces the journal with `bytes` (one chunk). */
export const writeJournal = (ctx: UpperContext, bytes: Uint8Array) =>
  write(ctx, 'cannot write the overlay journal', (sql) => {
    sql.run(`DELETE FROM ${SANDBOX_JOURNAL} WHERE sandbox = ?`, [ctx.sandbox]);
    sql.run(`INSERT INTO ${SANDBOX_JOURNAL} (sandbox, pos, bytes) VALUES (?, 0, ?)`, [ctx.sandbox, bytes]);
    return true;
  });

/**
 * In one transaction: the bytes at `offset` and nothing after them (a torn tail is dropped). At 0
 * the first chunk is replaced, so an emptied journal still exists (as after writeJournal).
 */
export const appendJournal = (ctx: UpperContext, offset: number, bytes: Uint8Array) =>
  write(ctx, 'cannot append to the overlay journal', (sql) => {
    const { sandbox } = ctx;
    sql.run(`DELETE FROM ${SANDBOX_JOURNAL} WHERE sandbox = ? AND pos >= ?`, [sandbox, offset]);
    if (offset === 0) {
      sql.run(`INSERT INTO ${SANDBOX_JOURNAL} (sandbox, pos, bytes) VALUES (?, 0, ?)`, [sandbox, bytes]);
      return true;
    }
    sql.run(`UPDATE ${SANDBOX_JOURNAL} SET bytes = substr(bytes, 1, ? - pos) WHERE sandbox = ? AND pos < ? AND pos + length(bytes) > ?`, [
      offset,
      sandbox,
      offset,
      offset,
    ]);
    if (bytes.byteLength > 0) sql.run(`INSERT INTO ${SANDBOX_JOURNAL} (sandbox, pos, bytes) VALUES (?, ?, ?)`, [sandbox, offset, bytes]);
    return true;
  });

/** Deletes the sandbox and everything it holds (taking its lock first, without waiting). */
export async function drop(ctx: UpperContext): Promise<void> {
  await write(ctx, 'cannot delete the sandbox', (sql) => {
    for (const table of [SANDBOX_BLOBS, SANDBOX_JOURNAL, SANDBOXES]) sql.run(`DELETE FROM ${table} WHERE sandbox = ?`, [ctx.sandbox]);
  });
  ctx.held = false;
  ctx.basis = 'absent';
}
