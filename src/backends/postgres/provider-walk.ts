/**
 * The provider's `walk` (D4): a whole subtree in one query. Each row comes packed into one text
 * value (kind, stats and path), because decoding a value per column per row cost more than the
 * query itself.
 */
import { FsError, FsTargetKey, depthFirst, treeWalk, type FetchedTree, type FsDirEntry, type FsTarget, type FsWalkEntry, type FsWalkNarrowing, type FsWalkOptions } from '../../seam/index.js';
import type { Q } from './client.js';
import type { PgContext } from './provider-context.js';
import { entryOf } from './provider-list.js';
import { subtree, type Row } from './rows.js';
import { ENTRIES } from './schema.js';

/**
 * One entry: kind's first letter, `x` or `-` (executable), size, a space, mtime in microseconds
 * (exact, unlike a float of milliseconds), a space, the path below the walked directory (empty
 * for the walked directory itself). In path order, which the primary key gives for nothing and
 * leaves the seam's sort little to do.
 */
const SUBTREE = `SELECT left(kind, 1) || CASE WHEN executable THEN 'x' ELSE '-' END || coalesce(size::text, '') || ' '
    || coalesce((extract(epoch FROM mtime) * 1000000)::int8::text, '') || ' ' || substr(path, length($3) + 1) AS e
  FROM ${ENTRIES} WHERE workspace = $1 AND path >= $2 AND path < $4 AND (path = $2 OR path >= $3)`;

/** The walk's narrowing in the query: files whose path ends otherwise stay on the server, and are counted. */
const ENDING = ` AND (kind <> 'file' OR path LIKE ANY($5::text[]))`;
const LEFT_OUT = `SELECT count(*)::int AS n FROM ${ENTRIES}
  WHERE workspace = $1 AND path >= $2 AND path < $3 AND kind = 'file' AND NOT path LIKE ANY($4::text[])`;

/** A LIKE pattern for paths ending with `ending` (`\` is LIKE's escape character). */
const endingPattern = (ending: string) => `%${ending.replace(/[\\%_]/g, (c) => `\\${c}`)}`;

const FILE = 'f'.charCodeAt(0);
const DIRECTORY = 'd'.charCodeAt(0);
const EXECUTABLE = 'x'.charCodeAt(0);

/** The path of one packed row below the walked directory. */
function pathOf(value: string): string {
  return value.slice(value.indexOf(' ', value.indexOf(' ', 2) + 1) + 1);
}

/** The entry of one packed row (not a link's) whose path below `top` is `path`. */
function unpack(value: string, path: string, display: string, prefix: string): FsWalkEntry {
  const a = value.indexOf(' ', 2);
  const b = value.indexOf(' ', a + 1);
  const name = path.slice(path.lastIndexOf('/') + 1);
  const target = { targetKey: FsTargetKey(prefix + path), displayPath: display + path };
  const mtimeMs = b > a + 1 ? Number(value.slice(a + 1, b)) / 1000 : undefined;
  if (value.charCodeAt(0) === FILE) {
    const size = Number(value.slice(2, a));
    const executable = value.charCodeAt(1) === EXECUTABLE;
    return mtimeMs === undefined ? { name, type: 'file', target, size, executable, path } : { name, type: 'file', target, size, executable, mtimeMs, path };
  }
  return mtimeMs === undefined ? { name, type: 'directory', target, path } : { name, type: 'directory', target, mtimeMs, path };
}

const join = (dir: string, rel: string) => (dir.endsWith('/') ? `${dir}${rel}` : `${dir}/${rel}`);

/** How many files the narrowing leaves on the server below `key`. */
const leftOutBelow = (ctx: PgContext, q: Q, key: string, endings: readonly string[]) => {
  const { prefix, upper } = subtree(key);
  return (q(LEFT_OUT, [ctx.ws, prefix, upper, endings]) as Promise<[{ n: number }]>).then(([{ n }]) => n);
};

/**
 * The whole subtree below `target`, in any order; undefined when `target` is a link now.
 * `counted`: the count of the files left out, when another session is already making it.
 */
async function subtreeEntries(ctx: PgContext, q: Q, target: FsTarget, what: string, narrow: FsWalkNarrowing | undefined, counted?: Promise<number>): Promise<FetchedTree | undefined> {
  const key = target.targetKey;
  const { prefix, upper } = subtree(key);
  const endings = narrow?.fileNameEndsWith.map(endingPattern);
  const rows = ((await q(`${SUBTREE}${endings ? ENDING : ''} ORDER BY path`, [ctx.ws, key, prefix, upper, ...(endings ? [endings] : [])])) as { e: string }[]).map((r) => r.e);

  // The walked directory sorts first: its path is every other row's prefix.
  const self = rows[0] !== undefined && pathOf(rows[0]) === '' ? rows[0].charCodeAt(0) : undefined;
  if (self === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (self === FILE) throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
  if (self !== DIRECTORY) {
    if ((await ctx.redirect(q, key)) === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    return undefined; // walked where it leads, as a listing would
  }
  rows.shift();
  if (narrow && endings) {
    const n = await (counted ?? leftOutBelow(ctx, q, key, endings));
    if (n > 0) narrow.leftOut(n);
  }
  const paths = rows.map(pathOf);
  const links = new Map<number, FsWalkEntry>();
  for (let i = 0; i < rows.length; i++) {
    const kind = rows[i]!.charCodeAt(0);
    if (kind !== FILE && kind !== DIRECTORY) links.set(i, await linkEntry(ctx, q, target, prefix, paths[i]!));
  }
  const display = target.displayPath.endsWith('/') ? target.displayPath : `${target.displayPath}/`;
  return { paths, entry: (i) => links.get(i) ?? unpack(rows[i]!, paths[i]!, display, prefix) };
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
  { signal, prune, onUnreadable, narrow }: FsWalkOptions,
  list: (dir: FsTarget, signal: AbortSignal | undefined) => Promise<FsDirEntry[]>,
): AsyncIterable<FsWalkEntry> {
  const what = `cannot walk "${target.displayPath}"`;
  return treeWalk(async () => {
    await ctx.ready(signal);
    // On a Pool, the count of what the narrowing leaves out runs beside the entries' query.
    const endings = narrow?.fileNameEndsWith.map(endingPattern);
    const counted = endings && ctx.db.concurrent ? ctx.db.session(what, signal, (q) => leftOutBelow(ctx, q, target.targetKey, endings)) : undefined;
    counted?.catch(() => {}); // awaited only if the entries' query succeeds
    const entries = await ctx.db.session(what, signal, (q) => subtreeEntries(ctx, q, target, what, narrow, counted));
    // The seam's walk over listings, which lists no directory the caller pruned.
    return entries ?? depthFirst(target, (dir) => list(dir, signal), { ...(prune ? { prune } : {}), ...(onUnreadable ? { onUnreadable } : {}) });
  });
}
