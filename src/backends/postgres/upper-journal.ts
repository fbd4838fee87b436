/** The overlay's journal in the sandbox's journal table: chunks by byte position, appended in place. */
import { FsError } from '../../seam/index.js';
import { SANDBOX_JOURNAL } from './schema.js';
import type { UpperContext } from './upper-context.js';
import { bytesOf } from './upper-records.js';
import { bump, read, write } from './upper-session.js';

/** The whole journal (undefined when there is none); a gap between chunks is an error. */
export function readJournal(ctx: UpperContext): Promise<Uint8Array | undefined> {
  return read(ctx, 'cannot read the overlay journal', async (q) => {
    const rows = await q(`SELECT pos::text AS at, bytes FROM ${SANDBOX_JOURNAL} WHERE sandbox = $1 ORDER BY pos`, [ctx.sandbox]);
    if (rows.length === 0) return undefined;
    const chunks = rows.map((r) => bytesOf(r.bytes));
    let at = 0;
    for (const [i, r] of rows.entries()) {
      if (Number(r.at) !== at) throw new FsError('FS_IO_ERROR', `the overlay journal in ${ctx.where} has a gap at byte ${at}`);
      at += chunks[i]!.byteLength;
    }
    const out = new Uint8Array(at);
    let o = 0;
    for (const c of chunks) (out.set(c, o), (o += c.byteLength));
    return out;
  });
}

/** Replaces the journal with `bytes` (one chunk). */
export function writeJournal(ctx: UpperContext, bytes: Uint8Array): Promise<void> {
  return write(ctx, 'cannot write the overlay journal', async (q) => {
    await q(`DELETE FROM ${SANDBOX_JOURNAL} WHERE sandbox = $1`, [ctx.sandbox]);
    await q(`INSERT INTO ${SANDBOX_JOURNAL} (sandbox, pos, bytes) VALUES ($1, 0, $2)`, [ctx.sandbox, Buffer.from(bytes)]);
    await bump(ctx, q);
  });
}

export function appendJournal(ctx: UpperContext, offset: number, bytes: Uint8Array): Promise<void> {
  const { sandbox } = ctx;
  return write(ctx, 'cannot append to the overlay journal', async (q) => {
    // One transaction: the bytes at `offset` and nothing after them (a torn tail is dropped).
    // At 0 the first chunk is replaced, so an emptied journal still exists (as after writeJournal).
    await q(`DELETE FROM ${SANDBOX_JOURNAL} WHERE sandbox = $1 AND pos >= $2`, [sandbox, offset]);
    if (offset === 0) {
      await q(`INSERT INTO ${SANDBOX_JOURNAL} (sandbox, pos, bytes) VALUES ($1, 0, $2)`, [sandbox, Buffer.from(bytes)]);
      await bump(ctx, q);
      return;
    }
    await q(
      `UPDATE ${SANDBOX_JOURNAL} SET bytes = substring(bytes FROM 1 FOR ($2 - pos)::int)
       WHERE sandbox = $1 AND pos < $2 AND pos + length(bytes) > $2`,
      [sandbox, offset],
    );
    if (bytes.byteLength > 0) await q(`INSERT INTO ${SANDBOX_JOURNAL} (sandbox, pos, bytes) VALUES ($1, $2, $3)`, [sandbox, offset, Buffer.from(bytes)]);
    await bump(ctx, q);
  });
}
