/** The sandbox's row (its state document) and its blobs, as the overlay's UpperStore reads and writes them. */
import { FsError } from '../../seam/index.js';
import { SANDBOXES, SANDBOX_BLOBS } from './schema.js';
import type { UpperContext } from './upper-context.js';
import { bump, read, write } from './upper-session.js';

/** Whether the sandbox has a saved state. */
export function exists(ctx: UpperContext): Promise<boolean> {
  return read(ctx, 'cannot read the overlay state', async (q) => (await q(`SELECT 1 FROM ${SANDBOXES} WHERE sandbox = $1 AND state IS NOT NULL`, [ctx.sandbox])).length > 0);
}

/** Deletes the sandbox and everything it holds (its blobs and journal go with its row). */
export function drop(ctx: UpperContext): Promise<void> {
  return write(ctx, 'cannot delete the sandbox', async (q) => void (await q(`DELETE FROM ${SANDBOXES} WHERE sandbox = $1`, [ctx.sandbox])));
}

/** The state document, if any; the first read sets the revision this store knows. */
export function readState(ctx: UpperContext): Promise<Uint8Array | undefined> {
  return read(ctx, 'cannot read the overlay state', async (q) => {
    const rows = await q(`SELECT state, revision::text AS r FROM ${SANDBOXES} WHERE sandbox = $1`, [ctx.sandbox]);
    ctx.basis ??= rows[0]?.r ?? 'absent';
    return rows[0]?.state == null ? undefined : bytesOf(rows[0].state);
  });
}

export function writeState(ctx: UpperContext, bytes: Uint8Array): Promise<void> {
  return write(ctx, 'cannot write the overlay state', async (q) => {
    await q(`UPDATE ${SANDBOXES} SET state = $2 WHERE sandbox = $1`, [ctx.sandbox, Buffer.from(bytes)]);
    await bump(ctx, q);
  });
}

export function readBlob(ctx: UpperContext, id: string): Promise<Uint8Array | undefined> {
  return read(ctx, `cannot read overlay blob ${id}`, async (q) => {
    const rows = await q(`SELECT bytes FROM ${SANDBOX_BLOBS} WHERE sandbox = $1 AND id = $2`, [ctx.sandbox, id]);
    return rows[0] === undefined ? undefined : bytesOf(rows[0].bytes);
  });
}

export function writeBlob(ctx: UpperContext, id: string, bytes: Uint8Array): Promise<void> {
  return write(ctx, `cannot write overlay blob ${id}`, async (q) => {
    // Named by its digest: a blob already there holds the same bytes.
    await q(`INSERT INTO ${SANDBOX_BLOBS} (sandbox, id, bytes) VALUES ($1, $2, $3) ON CONFLICT (sandbox, id) DO NOTHING`, [ctx.sandbox, id, Buffer.from(bytes)]);
  });
}

export function deleteBlob(ctx: UpperContext, id: string): Promise<void> {
  return write(ctx, `cannot delete overlay blob ${id}`, async (q) => void (await q(`DELETE FROM ${SANDBOX_BLOBS} WHERE sandbox = $1 AND id = $2`, [ctx.sandbox, id])));
}

export function listBlobs(ctx: UpperContext): Promise<string[]> {
  return read(ctx, 'cannot list the overlay blobs', async (q) => (await q(`SELECT id FROM ${SANDBOX_BLOBS} WHERE sandbox = $1 ORDER BY id`, [ctx.sandbox])).map((r) => String(r.id)));
}

/** A bytea column's value as bytes (a view of the driver's Buffer, not a copy). */
export function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new FsError('FS_IO_ERROR', `unexpected bytea value from the database (${typeof value})`);
}
