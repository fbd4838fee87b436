/**
 * The provider's streams (L1): `openRead` reads a file's chunks from a byte offset, one chunk per
 * statement, so memory is bounded by a chunk; `swapFrom` stages the new content as a blob of its
 * own, chunk by chunk outside any transaction, then publishes it with one conditional statement.
 */
import {
  FsError,
  FsVersion,
  contentHasher,
  expectHolds,
  observe,
  throwIfAborted,
  type FsProviderReadOptions,
  type FsProviderReadStream,
  type FsSwapFromRequest,
  type FsSwapResult,
  type FsTarget,
} from '../../seam/index.js';
import { MAX_ATTEMPTS, type Q } from './client.js';
import type { NewContent } from './content.js';
import type { PgContext } from './provider-context.js';
import { swapAt } from './provider-write.js';
import { toUint8 } from './rows.js';
import { BLOB_IDS, CHUNKS, CHUNK_BYTES, ENTRIES } from './schema.js';

interface Head {
  readonly blob: string;
  readonly version: string;
  readonly size: number;
}

/** The file's row at `key` (a link followed to where it leads now), as `read` finds it. */
async function fileHead(ctx: PgContext, q: Q, key: string, what: string): Promise<Head> {
  for (let hop = 0; hop < MAX_ATTEMPTS; hop++) {
    const rows = await q(`SELECT kind, blob::text AS blob, version, size::float8 AS size FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`, [ctx.ws, key]);
    const row = rows[0];
    if (row === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    if (row.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
    if (row.kind === 'file') return row as Head;
    const next = await ctx.redirect(q, key);
    if (next === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    key = next;
  }
  throw new FsError('FS_IO_ERROR', `${what}: too many levels of symbolic links`);
}

export async function openRead(
  ctx: PgContext,
  target: FsTarget,
  { start = 0, signal }: FsProviderReadOptions & { readonly start?: number },
): Promise<FsProviderReadStream> {
  await ctx.ready(signal);
  const what = `cannot read "${target.displayPath}"`;
  if (!Number.isSafeInteger(start) || start < 0) throw new FsError('FS_INVALID_ARGUMENT', `${what}: start must be a non-negative integer`);
  const head = await ctx.db.session(what, signal, (q) => fileHead(ctx, q, target.targetKey, what));
  return { size: head.size, version: FsVersion(head.version), chunks: chunksFrom(ctx, head, start, signal, what) };
}

/**
 * The blob's bytes from `start`. A blob is never changed, only dropped whole when its file is
 * rewritten or removed: a chunk missing means exactly that, and the read fails rather than mix
 * two contents.
 */
async function* chunksFrom(ctx: PgContext, head: Head, start: number, signal: AbortSignal | undefined, what: string): AsyncGenerator<Uint8Array> {
  let at = start;
  while (at < head.size) {
    // The chunk holding byte `at`: the greatest offset not past it, one probe of the primary key.
    const rows = await ctx.db.session(what, signal, (q) =>
      q(`SELECT pos::float8 AS pos, bytes FROM ${CHUNKS} WHERE blob = $1::bigint AND pos <= $2 ORDER BY pos DESC LIMIT 1`, [head.blob, at]),
    );
    const row = rows[0] as { pos: number; bytes: Uint8Array } | undefined;
    const bytes = row === undefined ? undefined : toUint8(row.bytes);
    if (row === undefined || row.pos + bytes!.byteLength <= at) {
      throw new FsError('FS_CONFLICT', `${what}: the file changed while it was read; read it again`);
    }
    const piece = bytes!.subarray(at - row.pos);
    at = row.pos + bytes!.byteLength;
    yield piece;
  }
}

export async function swapFrom(ctx: PgContext, target: FsTarget, { expect, source, signal }: FsSwapFromRequest): Promise<FsSwapResult> {
  await ctx.ready(signal);
  const what = `cannot write "${target.displayPath}"`;
  const key: string = target.targetKey;
  // Checked first, so a swap bound to fail reads nothing of its source (checked again on publication).
  const now = (await ctx.db.session(what, signal, (q) => q(`SELECT kind, version FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`, [ctx.ws, key])))[0];
  if (now?.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: it is a directory`);
  if (now?.kind !== 'symlink') {
    const current = now === undefined ? undefined : { version: FsVersion(now.version) };
    if (!expectHolds(expect, current)) return { ok: false, current: observe(current) };
  }
  const blob = String((await ctx.db.session(what, signal, (q) => q(`SELECT nextval('${BLOB_IDS}')::text AS blob`)))[0].blob);
  let published = false;
  try {
    const content = await stage(ctx, blob, source, signal, what);
    const result = await ctx.db.session(what, signal, (q) => swapAt(ctx, q, key, expect, content, what));
    published = result.ok;
    return result;
  } finally {
    // A staged blob no row names is dropped; the check guards a publication whose answer was lost.
    if (!published) {
      await ctx.db
        .session(what, undefined, (q) =>
          q(`DELETE FROM ${CHUNKS} WHERE blob = $1::bigint AND NOT EXISTS (SELECT 1 FROM ${ENTRIES} WHERE workspace = $2 AND blob = $1::bigint)`, [blob, ctx.ws]),
        )
        .catch(() => {});
    }
  }
}

/** Stores the source as the chunks of `blob`, one statement per chunk, hashing as it goes. */
async function stage(ctx: PgContext, blob: string, source: AsyncIterable<Uint8Array>, signal: AbortSignal | undefined, what: string): Promise<NewContent> {
  const hasher = contentHasher();
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let filled = 0;
  let size = 0;
  const store = async (bytes: Buffer) => {
    await ctx.db.session(what, signal, (q) => q(`INSERT INTO ${CHUNKS} (blob, pos, bytes) VALUES ($1::bigint, $2, $3)`, [blob, size - filled, bytes]));
    filled = 0;
  };
  for await (const piece of source) {
    throwIfAborted(signal, what);
    hasher.update(piece);
    for (let off = 0; off < piece.byteLength; ) {
      const n = Math.min(CHUNK_BYTES - filled, piece.byteLength - off);
      buffer.set(piece.subarray(off, off + n), filled);
      filled += n;
      size += n;
      off += n;
      if (size > ctx.maxFileBytes) {
        throw new FsError('FS_TOO_LARGE', `${what}: more than the ${ctx.maxFileBytes}-byte limit of this PostgreSQL workspace (its maxFileBytes option)`);
      }
      if (filled === CHUNK_BYTES) await store(buffer);
    }
  }
  if (filled > 0) await store(buffer.subarray(0, filled));
  return { blob, version: hasher.digest(), size };
}
