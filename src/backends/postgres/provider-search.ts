/**
 * The provider's `searchCandidates`: the files of a subtree whose content holds some bytes,
 * in one query over the rows and their chunks, so a grep reads only those files (and, asked,
 * with the bytes of the small ones, so it reads none of those either).
 */
import { FsTargetKey, type FsOpOptions, type FsSearchCandidates, type FsSearchQuery, type FsTarget } from '../../seam/index.js';
import { wholeContent } from './content.js';
import type { PgContext } from './provider-context.js';
import { subtree } from './rows.js';
import { CHUNKS, CHUNK_BYTES, ENTRIES } from './schema.js';

/**
 * A file is a candidate when one of its chunks holds the bytes, or may not be text (a NUL byte,
 * or a byte outside ASCII: its LATIN1 reading is longer in UTF-8 than the bytes, a wider set than
 * T1's, which is allowed), or the bytes start in its last n-1 bytes and end in the next chunk's
 * first n-1. A next chunk shorter than the bytes and not the last (never written so by dsh-fs,
 * whose chunks are 1 MiB but the last) could let them span three: its file is kept as a
 * candidate, never left out. One probe of the file's chunks: it refers to the file's size, so the
 * planner cannot turn it into one scan of every chunk in the table (which it did with separate
 * probes once the tables were analyzed, at several times the cost).
 */
const CANDIDATE = `EXISTS (SELECT 1 FROM ${CHUNKS} c LEFT JOIN ${CHUNKS} n ON n.blob = c.blob AND n.pos = c.pos + octet_length(c.bytes)
  WHERE c.blob = e.blob AND (position($2::bytea IN c.bytes) > 0
    OR CASE WHEN position('\\x00'::bytea IN c.bytes) > 0 THEN true ELSE octet_length(convert_from(c.bytes, 'LATIN1')) > octet_length(c.bytes) END
    OR (n.blob IS NOT NULL AND (octet_length(n.bytes) < $5 AND n.pos + octet_length(n.bytes) < e.size
      OR position($2::bytea IN substring(c.bytes FROM greatest(octet_length(c.bytes) - $5 + 2, 1)) || substring(n.bytes FROM 1 FOR $5 - 1)) > 0))))`;

/**
 * With `contents`: each candidate's bytes too when it is small enough and the sizes of the small
 * ones so far (in path order) stay within the total, aggregated from its chunks in the same query.
 */
const WITH_CONTENTS = (candidates: string) => `SELECT k.path, CASE WHEN k.size <= $7
    AND sum(CASE WHEN k.size <= $7 THEN k.size ELSE 0 END) OVER (ORDER BY k.path) <= $8 THEN ${wholeContent('k.blob')} END AS bytes
  FROM (${candidates}) k`;

export async function searchCandidates(ctx: PgContext, root: FsTarget, query: FsSearchQuery, { signal }: FsOpOptions): Promise<FsSearchCandidates | undefined> {
  const { contains, alsoLargerThan, contents } = query;
  await ctx.ready(signal);
  if (contains.byteLength === 0 || contains.byteLength > CHUNK_BYTES) return undefined;
  const what = `cannot search "${root.displayPath}"`;
  const { prefix, upper } = subtree(root.targetKey);
  const candidates = `SELECT e.path, e.size, e.blob FROM ${ENTRIES} e WHERE e.workspace = $1 AND e.kind = 'file' AND e.path >= $3 AND e.path < $4
       AND (e.size > $6 OR ${CANDIDATE})`;
  const params: unknown[] = [ctx.ws, Buffer.from(contains.buffer, contains.byteOffset, contains.byteLength), prefix, upper, contains.byteLength, alsoLargerThan];
  if (contents !== undefined) params.push(contents.maxFileBytes, contents.maxTotalBytes);
  const rows = await ctx.db.session(what, signal, (q) => q(contents === undefined ? candidates : WITH_CONTENTS(candidates), params));
  const keys = new Set(rows.map((r) => FsTargetKey(r.path as string)));
  if (contents === undefined) return keys;
  const given = new Map<FsTargetKey, Uint8Array>();
  for (const r of rows) {
    const bytes = r.bytes as Uint8Array | null | undefined;
    if (bytes !== null && bytes !== undefined) given.set(FsTargetKey(r.path as string), bytes);
  }
  return Object.assign(keys, { contents: given });
}
