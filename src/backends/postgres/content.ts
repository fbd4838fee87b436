/**
 * A file's content in the chunks table (schema version 6): how a write names its new blob, stores
 * its chunks in the same statement, and how a read gathers them back.
 */
import { contentVersion, type FsVersion } from '../../seam/index.js';
import { BLOB_IDS, CHUNKS, CHUNK_BYTES } from './schema.js';

/**
 * New content for a file: bytes sent with the statement that publishes them (split into chunks
 * on the server), or a blob already staged chunk by chunk (`swapFrom`).
 */
export type NewContent =
  | { readonly bytes: Buffer; readonly version: FsVersion; readonly size: number }
  | { readonly blob: string; readonly version: FsVersion; readonly size: number };

export function bytesContent(bytes: Uint8Array): NewContent {
  return { bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), version: contentVersion(bytes), size: bytes.byteLength };
}

/** The parameter a statement binds for `content`: the bytes, or the staged blob's id. */
export const contentParam = (content: NewContent): Buffer | string => ('bytes' in content ? content.bytes : content.blob);

/** SQL for the blob id a row takes for `content` bound at `$n`: a fresh id for bytes, else the staged one. */
export const blobSql = (content: NewContent, n: number): string => ('bytes' in content ? `nextval('${BLOB_IDS}')` : `$${n}::bigint`);

/**
 * A CTE (with its leading comma) storing the chunks of the bytes bound at `$n` under the blob of
 * each row `from` returns (a CTE with a `blob` column): nothing for a staged blob, whose chunks
 * are stored already. So the chunks are written only when the row was, in the same statement.
 */
export function chunksCte(content: NewContent, from: string, n: number): string {
  if (!('bytes' in content)) return '';
  return `, stored AS (INSERT INTO ${CHUNKS} (blob, pos, bytes)
    SELECT f.blob, g.pos, substring($${n}::bytea FROM g.pos::int + 1 FOR ${CHUNK_BYTES})
    FROM ${from} f, generate_series(0::bigint, octet_length($${n}::bytea)::bigint - 1, ${CHUNK_BYTES}) AS g(pos))`;
}

/** SQL: the whole content of the blob `blob` (an SQL expression), in one value; empty when it has no chunks. */
export const wholeContent = (blob: string): string =>
  `coalesce((SELECT string_agg(c.bytes, ''::bytea ORDER BY c.pos) FROM ${CHUNKS} c WHERE c.blob = ${blob}), ''::bytea)`;
