/**
 * The provider's `applyBatch` (B1): every swap of the batch in one transaction. The rows are locked
 * and every expectation checked first, then the changes are made; any failure, a broken
 * expectation included, rolls the whole transaction back, so nothing of the batch is ever seen.
 */
import { FsError, FsVersion, expectHolds, observe, type FsBatchResult, type FsBatchSwap } from '../../seam/index.js';
import { MAX_ATTEMPTS, type Db, type Q } from './client.js';
import { blobSql, bytesContent, chunksCte, contentParam } from './content.js';
import { insertFile } from './rows.js';
import { ENTRIES } from './schema.js';

export interface BatchTable {
  readonly ws: string;
  readonly root: string;
  readonly maxFileBytes: number;
  /** Where a link at `key` leads now, or undefined when it leads to no other key. */
  redirect(q: Q, key: string): Promise<string | undefined>;
}

interface Locked {
  readonly key: string;
  readonly version: FsVersion | undefined;
  readonly executable: boolean;
}

/** Thrown inside the transaction to roll it back when an expectation fails; carries the answer. */
class Refused extends FsError {
  constructor(readonly result: Extract<FsBatchResult, { ok: false }>) {
    super('FS_STALE_VERSION', 'a change of the batch found its expectation broken');
  }
}

export async function applyBatchIn(db: Db, table: BatchTable, swaps: readonly FsBatchSwap[], signal: AbortSignal | undefined): Promise<FsBatchResult> {
  for (const s of swaps) {
    if (s.bytes !== null && s.bytes.byteLength > table.maxFileBytes) {
      throw new FsError('FS_TOO_LARGE', `cannot write "${s.target.displayPath}": ${s.bytes.byteLength} bytes exceeds the ${table.maxFileBytes}-byte limit of this PostgreSQL workspace`);
    }
  }
  try {
    return await db.transaction('cannot apply the changes', signal, async (q) => {
      const locked = await lockAll(q, table, swaps);
      for (const [index, s] of swaps.entries()) {
        const now = locked[index]!.version;
        if (!expectHolds(s.expect, now === undefined ? undefined : { version: now })) throw new Refused({ ok: false, index, current: observe(now && { version: now }) });
      }
      // Removals first: a file this batch removes may stand where a new file needs a directory.
      for (const [i, s] of swaps.entries()) {
        if (s.bytes === null && locked[i]!.version !== undefined) {
          await q(`DELETE FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`, [table.ws, locked[i]!.key]);
        }
      }
      // A moved file keeps its executable bit (X1), as a rename keeps its row's.
      const byTarget = new Map(swaps.map((s, i) => [s.target.targetKey as string, locked[i]!]));
      const versions: (FsVersion | undefined)[] = [];
      for (const [index, s] of swaps.entries()) {
        const executable = s.from === undefined ? undefined : byTarget.get(s.from.targetKey)?.executable;
        versions.push(s.bytes === null ? undefined : await write(q, table, s, locked[index]!, index, executable));
      }
      return { ok: true, versions };
    });
  } catch (err) {
    if (err instanceof Refused) return err.result;
    throw err;
  }
}

/** Every target's row locked `FOR NO KEY UPDATE` in path order (links followed, as `read` does). */
async function lockAll(q: Q, table: BatchTable, swaps: readonly FsBatchSwap[]): Promise<Locked[]> {
  const keys = swaps.map((s) => s.target.targetKey as string);
  const rows = await q(
    `SELECT path, kind, version, executable FROM ${ENTRIES} WHERE workspace = $1 AND path = ANY($2::text[]) ORDER BY path FOR NO KEY UPDATE`,
    [table.ws, keys],
  );
  const byPath = new Map(rows.map((r) => [r.path as string, r as { kind: string; version: string | null; executable: boolean | null }]));
  const out: Locked[] = [];
  for (const [i, s] of swaps.entries()) {
    let key = keys[i]!;
    let row = byPath.get(key);
    for (let hops = 0; row?.kind === 'symlink'; hops++) {
      const next = hops < MAX_ATTEMPTS ? await table.redirect(q, key) : undefined;
      if (next === undefined) throw new FsError('FS_IO_ERROR', `cannot write "${s.target.displayPath}": a symbolic link that does not resolve is in the way`);
      key = next;
      row = (await q(`SELECT path, kind, version, executable FROM ${ENTRIES} WHERE workspace = $1 AND path = $2 FOR NO KEY UPDATE`, [table.ws, key]))[0];
    }
    if (row?.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `cannot write "${s.target.displayPath}": it is a directory`);
    out.push({ key, version: row === undefined ? undefined : FsVersion(row.version!), executable: row?.executable === true });
  }
  return out;
}

/** One write of the batch on its locked row, or a new row (with its missing parents). */
async function write(q: Q, table: BatchTable, s: FsBatchSwap, at: Locked, index: number, executable: boolean | undefined): Promise<FsVersion> {
  const content = bytesContent(s.bytes!);
  const what = `cannot write "${s.target.displayPath}"`;
  const mode = executable === undefined ? '' : ', executable = $6';
  const setMode = executable === undefined ? [] : [executable];
  if (at.version !== undefined) {
    await q(
      `WITH upd AS (UPDATE ${ENTRIES} SET blob = ${blobSql(content, 3)}, version = $4, size = $5, mtime = now()${mode}
         WHERE workspace = $1 AND path = $2 RETURNING blob)${chunksCte(content, 'upd', 3)}
       SELECT 1 FROM upd`,
      [table.ws, at.key, contentParam(content), content.version, content.size, ...setMode],
    );
    return content.version;
  }
  if (!(await insertFile(q, table.ws, table.root, at.key, content, what))) {
    // Created by another writer since the rows were locked (an absent file has no row to lock).
    const now = (await q(`SELECT version FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`, [table.ws, at.key]))[0];
    throw new Refused({ ok: false, index, current: observe(now?.version == null ? undefined : { version: FsVersion(now.version) }) });
  }
  if (executable === true) await q(`UPDATE ${ENTRIES} SET executable = true WHERE workspace = $1 AND path = $2`, [table.ws, at.key]);
  return content.version;
}
