/**
 * The provider's `walk` (D4): a whole subtree in one query. The rows come packed into a few text
 * values (each entry's kind, stats and path in one string, 10,000 entries a value), because
 * decoding a value per column per row cost several times the query itself.
 */
import { FsError, FsTargetKey, depthFirst, treeWalk, type FsDirEntry, type FsTarget, type FsWalkEntry, type FsWalkOptions } from '../../seam/index.js';
import type { Q } from './client.js';
import type { PgContext } from './provider-context.js';
import { entryOf } from './provider-list.js';
import { subtree, type Row } from './rows.js';
import { ENTRIES } from './schema.js';

/** Entries per packed value: bounds the length of one string, however large the subtree. */
const PER_VALUE = 10_000;

/**
 * One entry: kind's first letter, `x` or `-` (executable), size, a space, mtime in microseconds,
 * a space, the length of the path below the walked directory in characters, a space, that path.
 * Values in path order (free: the primary key's order); group -1 is the walked directory's kind.
 */
const PACKED = `left(kind, 1) || CASE WHEN executable THEN 'x' ELSE '-' END || coalesce(size::text, '') || ' '
  || coalesce((extract(epoch FROM mtime) * 1000000)::int8::text, '') || ' ' || (length(path) - length($3)) || ' ' || substr(path, length($3) + 1)`;
const SUBTREE = `SELECT g, string_agg(e, '' ORDER BY path) AS e FROM (
    SELECT path, (row_number() OVER (ORDER BY path) - 1) / ${PER_VALUE} AS g, ${PACKED} AS e
    FROM ${ENTRIES} WHERE workspace = $1 AND path >= $3 AND path < $4 AND path <> $2) AS t GROUP BY g
  UNION ALL SELECT -1, kind FROM ${ENTRIES} WHERE workspace = $1 AND path = $2
  ORDER BY g`;

/**
 * The entries of one packed value below `top` (whose key starts every path with `prefix`); a
 * link's entry is a placeholder, its index put in `links`.
 */
export function unpack(value: string, top: FsTarget, prefix: string, out: FsWalkEntry[], links: number[]): void {
  const display = top.displayPath.endsWith('/') ? top.displayPath : `${top.displayPath}/`;
  for (let i = 0; i < value.length; ) {
    const a = value.indexOf(' ', i + 2);
    const b = value.indexOf(' ', a + 1);
    const c = value.indexOf(' ', b + 1);
    const end = afterCodePoints(value, c + 1, Number(value.slice(b + 1, c)));
    const path = value.slice(c + 1, end);
    const kind = value.charCodeAt(i);
    const name = path.slice(path.lastIndexOf('/') + 1);
    const target = { targetKey: FsTargetKey(prefix + path), displayPath: display + path };
    const mtimeMs = b > a + 1 ? Number(value.slice(a + 1, b)) / 1000 : undefined;
    if (kind === FILE) {
      const size = Number(value.slice(i + 2, a));
      const executable = value.charCodeAt(i + 1) === EXECUTABLE;
      out.push(mtimeMs === undefined ? { name, type: 'file', target, size, executable, path } : { name, type: 'file', target, size, executable, mtimeMs, path });
    } else {
      if (kind !== DIRECTORY) links.push(out.length);
      out.push(mtimeMs === undefined ? { name, type: 'directory', target, path } : { name, type: 'directory', target, mtimeMs, path });
    }
    i = end;
  }
}

const FILE = 'f'.charCodeAt(0);
const DIRECTORY = 'd'.charCodeAt(0);
const EXECUTABLE = 'x'.charCodeAt(0);

/** Where `count` code points from `start` end (PostgreSQL counts characters, JavaScript UTF-16 units). */
function afterCodePoints(value: string, start: number, count: number): number {
  const end = start + count;
  if (!/[\ud800-\udbff]/.test(value.slice(start, end))) return end;
  let i = start;
  for (let n = 0; n < count; n++) i += (value.charCodeAt(i) & 0xfc00) === 0xd800 ? 2 : 1;
  return i;
}

const join = (dir: string, rel: string) => (dir.endsWith('/') ? `${dir}${rel}` : `${dir}/${rel}`);

/** The whole subtree below `target`, in any order; undefined when `target` is a link now. */
async function subtreeEntries(ctx: PgContext, q: Q, target: FsTarget, what: string): Promise<FsWalkEntry[] | undefined> {
  const key = target.targetKey;
  const { prefix, upper } = subtree(key);
  const rows = (await q(SUBTREE, [ctx.ws, key, prefix, upper])) as { g: number | string; e: string }[];
  const self = rows.find((r) => Number(r.g) === -1)?.e;
  if (self === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (self === 'file') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
  if (self === 'symlink') {
    if ((await ctx.redirect(q, key)) === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    return undefined; // walked where it leads, as a listing would
  }
  const out: FsWalkEntry[] = [];
  const links: number[] = [];
  for (const row of rows) if (Number(row.g) !== -1) unpack(row.e, target, prefix, out, links);
  for (const at of links) out[at] = await linkEntry(ctx, q, target, prefix, out[at]!.path);
  return out;
}

/** A link, typed by what it leads to (P4) as listDir types it: a query or two each. */
async function linkEntry(ctx: PgContext, q: Q, top: FsTarget, prefix: string, path: string): Promise<FsWalkEntry> {
  const slash = path.lastIndexOf('/');
  const parent: FsTarget =
    slash === -1 ? top : { targetKey: FsTargetKey(prefix + path.slice(0, slash)), displayPath: join(top.displayPath, path.slice(0, slash)) };
  const row = { path: prefix + path, kind: 'symlink' } as Row;
  return { ...(await entryOf(ctx, q, parent, row, path.slice(slash + 1))), path };
}

/** `list` is the provider's own listDir, for the walk over listings when the top is a link now. */
export function walk(
  ctx: PgContext,
  target: FsTarget,
  { signal, prune, onUnreadable }: FsWalkOptions,
  list: (dir: FsTarget, signal: AbortSignal | undefined) => Promise<FsDirEntry[]>,
): AsyncIterable<FsWalkEntry> {
  const what = `cannot walk "${target.displayPath}"`;
  return treeWalk(async () => {
    await ctx.ready(signal);
    const entries = await ctx.db.session(what, signal, (q) => subtreeEntries(ctx, q, target, what));
    // The seam's walk over listings, which lists no directory the caller pruned.
    return entries ?? depthFirst(target, (dir) => list(dir, signal), { ...(prune ? { prune } : {}), ...(onUnreadable ? { onUnreadable } : {}) });
  });
}
