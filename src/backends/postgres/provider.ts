/**
 * A workspace kept in one PostgreSQL table (see schema.ts), shared by every process and machine
 * that opens it. Every file mutation is one conditional statement (native compare-and-swap);
 * directories are rows, and the table's foreign key keeps the tree whole under concurrency.
 */
import { posix } from 'node:path';
import {
  FsError,
  FsTargetKey,
  FsVersion,
  canonicalPath,
  checkRename,
  checkRmdir,
  contentVersion,
  depthFirst,
  expectHolds,
  isWithin,
  observe,
  resolveLinks,
  type FsCurrent,
  type FsDirEntry,
  type FsExpect,
  type FsInfo,
  type FsProvider,
  type FsSwapResult,
  type FsTarget,
  type FsWalkEntry,
  type LinkReader,
  type NodeKind,
  type RenameSide,
} from '../../seam/index.js';
import { Db, MAX_ATTEMPTS, abortable, RETRYABLE, sqlState, type PgQueryable, type Q } from './client.js';
import { ENTRIES, ensureSchema } from './schema.js';
import { modifyAt } from './modify.js';
import { applyBatchIn } from './batch.js';
import { setExecutableAt } from './modes.js';
import { deleteLink, insertLink, moveLink, readLink } from './links.js';
import { COLUMNS, ENSURE_DIRS, dirsBetween, insertFile, notDirectory, parentOf, selfAndAncestors, strictAncestors, subtree, toBuffer, toUint8, type Row } from './rows.js';

/** Default largest file stored: 64 MiB (one bytea value; PostgreSQL's own limit is 1 GiB). */
export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;

export interface PostgresProviderOptions {
  /** A `pg` Pool (recommended), a `pg` Client, a PGlite instance, or anything with `query(text, values)` → `{ rows }`. */
  readonly client: PgQueryable;
  /** The workspace's name; many workspaces share one table. */
  readonly workspace: string;
  /** The directory the filesystem is confined to (default `/`). */
  readonly root?: string;
  /** Default directory for relative paths (default: `root`). */
  readonly cwd?: string;
  /** Larger writes are refused with FS_TOO_LARGE (default 64 MiB). */
  readonly maxFileBytes?: number;
}

export interface PostgresProvider extends FsProvider {
  readonly root: string;
  readonly workspace: string;
  readonly maxFileBytes: number;
  /** Creates the schema and the root's rows if needed; every operation awaits it first. */
  ready(): Promise<void>;
}

export function createPostgresProvider(options: PostgresProviderOptions): PostgresProvider {
  if (typeof options.workspace !== 'string' || options.workspace.length === 0) {
    throw new FsError('FS_INVALID_ARGUMENT', 'workspace must be a non-empty string');
  }
  if (typeof options.client?.query !== 'function') throw new FsError('FS_INVALID_ARGUMENT', 'client must have a query(text, values) method');
  const ws = options.workspace;
  const root = canonicalPath(options.root ?? '/', '/');
  const cwd = canonicalPath(options.cwd ?? root, root);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const db = new Db(options.client);

  let readiness: Promise<void> | undefined;
  // Shared by every call; each caller's signal ends only its own wait for it.
  const ready = (signal?: AbortSignal) => abortable(prepared(), signal, `cannot prepare the workspace "${ws}"`);
  const prepared = () =>
    (readiness ??= (async () => {
      await ensureSchema(db);
      // The root and its ancestors exist as directories, so every entry below has its parent.
      await db.session(`cannot prepare the workspace "${ws}"`, undefined, (q) => ensureDirs(q, ['/', ...strictAncestors(root), ...(root === '/' ? [] : [root])], `cannot use "${root}" as the root`));
    })().catch((err) => {
      readiness = undefined; // the next call tries again (the server may be back)
      throw err;
    }));

  const outside = (path: string, where: string) =>
    new FsError('FS_OUTSIDE_ROOT', `"${path}" leads through a symbolic link to "${where}", which is outside the root "${root}"`);

  /** Links resolved with the seam's resolveLinks over the table: the path's prefixes in one query, then one per link followed. */
  async function resolveKey(q: Q, path: string): Promise<string> {
    const cache = new Map<string, Row | null>();
    const load = async (paths: string[]) => {
      const missing = paths.filter((p) => !cache.has(p));
      if (missing.length === 0) return;
      const rows = await q(`SELECT ${COLUMNS} FROM ${ENTRIES} WHERE workspace = $1 AND path = ANY($2::text[])`, [ws, missing]);
      for (const p of missing) cache.set(p, null);
      for (const r of rows as Row[]) cache.set(r.path, r);
    };
    await load(selfAndAncestors(path).filter((p) => isWithin(root, p)));
    const reader: LinkReader = {
      async kind(p): Promise<NodeKind> {
        if (p !== root && isWithin(p, root)) return 'directory'; // the root's ancestors
        if (!isWithin(root, p)) throw outside(path, p);
        await load([p]);
        const row = cache.get(p);
        return row ? (row.kind === 'symlink' ? 'link' : row.kind) : 'missing';
      },
      readlink: (p) => cache.get(p)!.link!,
    };
    const key = await resolveLinks(path, reader, (resolved) => {
      if (!isWithin(root, resolved) && !isWithin(resolved, root)) throw outside(path, resolved);
    });
    if (!isWithin(root, key)) throw outside(path, key);
    return key;
  }

  const getRow = async (q: Q, key: string): Promise<Row | undefined> =>
    ((await q(`SELECT ${COLUMNS} FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`, [ws, key])) as Row[])[0];

  /**
   * A key that is a link now (it became one after it was resolved): where it leads (FS_OUTSIDE_ROOT
   * when that is outside the root), or undefined when it does not resolve to another key.
   */
  const redirect = async (q: Q, key: string): Promise<string | undefined> => {
    const next = await resolveKey(q, key);
    return next === key ? undefined : next;
  };

  /** D1: directories (each with its parent before it); something else in the way is FS_NOT_DIRECTORY. */
  async function ensureDirs(q: Q, paths: string[], what: string): Promise<void> {
    if (paths.length === 0) return;
    for (let attempt = 1; ; attempt++) {
      try {
        const bad = await q(`WITH ${ENSURE_DIRS} SELECT path, kind FROM bad`, [ws, paths, paths.map(parentOf)]);
        if (bad.length > 0) throw notDirectory(what, bad[0]);
        return;
      } catch (err) {
        // A concurrent rmdir removed a parent between our insert and its foreign-key check.
        if (attempt < MAX_ATTEMPTS && RETRYABLE.has(sqlState(err) ?? '')) continue;
        throw err;
      }
    }
  }

  /** The swap at `key`: one conditional statement, then (only when it changed nothing) one read of what is there. */
  async function swapAt(q: Q, key: string, expect: FsExpect, bytes: Uint8Array | null, what: string): Promise<FsSwapResult> {
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
      const row = await getRow(q, key);
      if (row?.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: it is a directory`);
      if (row?.kind === 'symlink') {
        const next = await resolveKey(q, key);
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

  /** A listing entry for a child row: a link is typed by what it leads to (P4), `other` when that is nothing. */
  async function entryOf(q: Q, parent: FsTarget, row: Row, name: string): Promise<FsDirEntry> {
    const displayPath = posix.join(parent.displayPath, name);
    let key = row.path;
    let target: Row | undefined = row;
    if (row.kind === 'symlink') {
      // A link that dangles, loops or leaves the root is listed, never followed.
      const next = await redirect(q, row.path).catch(() => undefined);
      target = next === undefined ? undefined : await getRow(q, next);
      if (next !== undefined) key = next;
    }
    const type = target?.kind === 'file' ? 'file' : target?.kind === 'directory' ? 'directory' : 'other';
    return {
      name,
      type,
      target: { targetKey: FsTargetKey(key), displayPath },
      ...(type === 'file' ? { size: target!.size!, executable: target!.executable === true } : {}),
      ...(target?.mtime_ms != null ? { mtimeMs: target.mtime_ms } : {}),
    };
  }

  /** The directory at `key` (following a link that appeared there), or the listing error. */
  async function directoryKey(q: Q, key: string, what: string, rows: Row[]): Promise<string | undefined> {
    const self = rows.find((r) => r.path === key);
    if (self === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    if (self.kind === 'file') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
    if (self.kind === 'directory') return undefined;
    const next = await redirect(q, key);
    if (next === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    return next;
  }

  const provider: PostgresProvider = {
    root,
    cwd,
    workspace: ws,
    maxFileBytes,
    ready,

    async resolve(path, { signal }) {
      await ready(signal);
      const key = await db.session(`cannot resolve "${path}"`, signal, (q) => resolveKey(q, path));
      return { targetKey: FsTargetKey(key), displayPath: path };
    },

    async stat(target, { signal }): Promise<FsInfo | undefined> {
      await ready(signal);
      return db.session(`cannot stat "${target.displayPath}"`, signal, async (q) => {
        let row = await getRow(q, target.targetKey);
        if (row?.kind === 'symlink') {
          const next = await redirect(q, row.path);
          row = next === undefined ? undefined : await getRow(q, next);
        }
        if (row === undefined) return undefined;
        if (row.kind === 'file') return { type: 'file', version: FsVersion(row.version!), size: row.size!, mtimeMs: row.mtime_ms!, executable: row.executable === true };
        if (row.kind === 'directory') return { type: 'directory', version: FsVersion('dir'), mtimeMs: row.mtime_ms! };
        return { type: 'other', version: FsVersion('other') };
      });
    },

    async read(target, { maxBytes, signal }): Promise<FsCurrent> {
      await ready(signal);
      const what = `cannot read "${target.displayPath}"`;
      return db.session(what, signal, async (q) => {
        let key: string = target.targetKey;
        for (let hop = 0; hop < MAX_ATTEMPTS; hop++) {
          // The size is checked in the same statement, before the content is sent.
          const rows = await q(
            `SELECT kind, version, size, link, CASE WHEN $3::float8 IS NULL OR size <= $3::float8 THEN content END AS content
             FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`,
            [ws, key, Number.isFinite(maxBytes) ? maxBytes : null],
          );
          const row = rows[0];
          if (row === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
          if (row.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
          if (row.kind === 'symlink') {
            const next = await redirect(q, key);
            if (next === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
            key = next;
            continue;
          }
          if (row.content == null) throw new FsError('FS_TOO_LARGE', `${what}: ${row.size} bytes exceeds the ${maxBytes}-byte limit`);
          return { bytes: toUint8(row.content), version: FsVersion(row.version) };
        }
        throw new FsError('FS_IO_ERROR', `${what}: too many levels of symbolic links`);
      });
    },

    async swap(target, { expect, bytes, signal }) {
      await ready(signal);
      const what = `cannot write "${target.displayPath}"`;
      if (bytes !== null && bytes.byteLength > maxFileBytes) {
        throw new FsError('FS_TOO_LARGE', `${what}: ${bytes.byteLength} bytes exceeds the ${maxFileBytes}-byte limit of this PostgreSQL workspace`);
      }
      return db.session(what, signal, (q) => swapAt(q, target.targetKey, expect, bytes, what));
    },

    async modify(target, { maxBytes, signal }, change) {
      await ready(signal);
      const what = `cannot write "${target.displayPath}"`;
      return db.transaction(what, signal, (q) => modifyAt(q, { ws, root, maxFileBytes, redirect }, target.targetKey, maxBytes, change, what));
    },

    async applyBatch(swaps, { signal }) {
      await ready(signal);
      return applyBatchIn(db, { ws, root, maxFileBytes, redirect }, swaps, signal);
    },

    async setExecutable(target, executable, { signal }) {
      await ready(signal);
      const what = `cannot change the mode of "${target.displayPath}"`;
      await db.session(what, signal, (q) => setExecutableAt(q, { ws, redirect }, target.targetKey, executable, what));
    },

    async symlink(target, linkText, { signal }) {
      await ready(signal);
      const what = `cannot create the link "${target.displayPath}"`;
      await db.session(what, signal, (q) => insertLink(q, ws, target.targetKey, linkText, what));
    },

    async readlink(target, { signal }) {
      await ready(signal);
      const what = `cannot read the link "${target.displayPath}"`;
      return db.session(what, signal, (q) => readLink(q, ws, target.targetKey, what));
    },

    async removeLink(target, { signal }) {
      await ready(signal);
      const what = `cannot remove the link "${target.displayPath}"`;
      await db.session(what, signal, (q) => deleteLink(q, ws, target.targetKey, what));
    },

    async renameLink(from, to, { replace, signal }) {
      await ready(signal);
      const what = `cannot move the link "${from.displayPath}" to "${to.displayPath}"`;
      await db.transaction(what, signal, (q) => moveLink(q, ws, from.targetKey, to.targetKey, replace, what));
    },

    async mkdir(target, { signal }) {
      await ready(signal);
      const what = `cannot create directory "${target.displayPath}"`;
      await db.session(what, signal, (q) => ensureDirs(q, [...dirsBetween(root, target.targetKey), ...(target.targetKey === root ? [] : [target.targetKey])], what));
    },

    async rmdir(target, { recursive, signal }) {
      await ready(signal);
      const what = `cannot remove directory "${target.displayPath}"`;
      const key = target.targetKey;
      const { prefix, upper } = subtree(key);
      await db.session(what, signal, async (q) => {
        for (let attempt = 1; ; attempt++) {
          const rows = await q(
            `SELECT kind, (SELECT count(*)::int FROM ${ENTRIES} c WHERE c.workspace = $1 AND c.parent = $2) AS n
             FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`,
            [ws, key],
          );
          const row = rows[0];
          if (row === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
          if (row.kind !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
          checkRmdir(what, row.n, recursive);
          try {
            if (recursive) {
              await q(`DELETE FROM ${ENTRIES} WHERE workspace = $1 AND path >= $2 AND path < $4 AND (path = $2 OR path >= $3)`, [ws, key, prefix, upper]);
            } else {
              await q(`DELETE FROM ${ENTRIES} WHERE workspace = $1 AND path = $2 AND kind = 'directory'`, [ws, key]);
            }
            return;
          } catch (err) {
            // The foreign key refused: an entry was created inside meanwhile.
            if (sqlState(err) !== '23503' || attempt >= MAX_ATTEMPTS) throw err;
            if (!recursive) checkRmdir(what, 1, false);
          }
        }
      });
    },

    async rename(from, to, options) {
      await ready(options.signal);
      const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
      const src = from.targetKey;
      const dst = to.targetKey;
      const { prefix, upper } = subtree(src);
      // One transaction: both names locked, checked by the seam's rules, the destination cleared,
      // and the source with everything below it moved in one UPDATE (D3).
      await db.transaction(what, options.signal, async (q) => {
        const rows = await q(
          `SELECT e.path, e.kind, e.version,
             EXISTS (SELECT 1 FROM ${ENTRIES} c WHERE c.workspace = e.workspace AND c.parent = e.path) AS nonempty
           FROM ${ENTRIES} e WHERE e.workspace = $1 AND e.path = ANY($2::text[]) FOR UPDATE OF e`,
          [ws, [src, dst]],
        );
        const side = (key: string): RenameSide | undefined => {
          const r = rows.find((x) => x.path === key);
          if (r === undefined) return undefined;
          if (r.kind === 'file') return { type: 'file', version: FsVersion(r.version) };
          if (r.kind === 'directory') return { type: 'directory', version: FsVersion('dir'), empty: !r.nonempty };
          return { type: 'other', version: FsVersion('other') };
        };
        const replacing = checkRename(what, side(src), side(dst), options);
        if (replacing === 'none') {
          const dirs = dirsBetween(root, dst);
          if (dirs.length > 0) {
            const bad = await q(`WITH ${ENSURE_DIRS} SELECT path, kind FROM bad`, [ws, dirs, dirs.map(parentOf)]);
            if (bad.length > 0) throw notDirectory(what, bad[0]);
          }
        } else {
          await q(`DELETE FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`, [ws, dst]);
        }
        await q(
          `UPDATE ${ENTRIES} SET
             path = $3 || substr(path, $5),
             parent = CASE WHEN path = $2 THEN $4 ELSE $3 || substr(parent, $5) END
           WHERE workspace = $1 AND path >= $2 AND path < $7 AND (path = $2 OR path >= $6)`,
          [ws, src, dst, parentOf(dst), [...src].length + 1, prefix, upper],
        );
      });
    },

    async listDir(target, { signal }): Promise<FsDirEntry[]> {
      await ready(signal);
      const what = `cannot list "${target.displayPath}"`;
      return db.session(what, signal, async (q) => {
        let key: string = target.targetKey;
        for (let hop = 0; hop < MAX_ATTEMPTS; hop++) {
          // The directory and its children in one query; siblings share a prefix, so bytewise path order is code-point name order.
          // (UNION ALL rather than OR: two plain index scans, measured 2.7× faster than a bitmap OR on PGlite.)
          const rows = (await q(
            `SELECT ${COLUMNS} FROM ${ENTRIES} WHERE workspace = $1 AND path = $2
             UNION ALL SELECT ${COLUMNS} FROM ${ENTRIES} WHERE workspace = $1 AND parent = $2 ORDER BY path`,
            [ws, key],
          )) as Row[];
          const next = await directoryKey(q, key, what, rows);
          if (next !== undefined) {
            key = next;
            continue;
          }
          const start = key === '/' ? 1 : key.length + 1;
          const children = rows.filter((r) => r.path !== key);
          const entries: FsDirEntry[] = [];
          for (const row of children) entries.push(await entryOf(q, target, row, row.path.slice(start)));
          return entries;
        }
        throw new FsError('FS_IO_ERROR', `${what}: too many levels of symbolic links`);
      });
    },

    walk(target, { signal, prune, onUnreadable }): AsyncIterable<FsWalkEntry> {
      const what = `cannot walk "${target.displayPath}"`;
      return (async function* () {
        await ready(signal);
        const entries = await db.session(what, signal, async (q) => {
          const key = target.targetKey;
          const { prefix, upper } = subtree(key);
          // D4: the whole subtree in one indexed range query, in tree order: sorting by the array of
          // segments puts a directory right before its contents ('a/b' before 'a-b', which bytewise order would not).
          const rows = (await q(
            `SELECT ${COLUMNS} FROM ${ENTRIES} WHERE workspace = $1 AND path >= $2 AND path < $4 AND (path = $2 OR path >= $3)
             ORDER BY string_to_array(path, '/') COLLATE "C"`,
            [ws, key, prefix, upper],
          )) as Row[];
          const next = await directoryKey(q, key, what, rows);
          // A walked directory that is a link now: walk where it leads, as a listing would.
          if (next !== undefined) return undefined;
          const out: FsWalkEntry[] = [];
          for (const row of rows) {
            if (row.path === key) continue;
            const path = row.path.slice(prefix.length);
            const dir = parentOf(row.path)!;
            const parent = { targetKey: FsTargetKey(dir), displayPath: posix.join(target.displayPath, posix.dirname(path)) };
            out.push({ ...(await entryOf(q, parent, row, posix.basename(row.path))), path });
          }
          return out;
        });
        if (entries === undefined) {
          // The seam's walk over listings, which lists no directory the caller pruned.
          yield* depthFirst(target, (dir) => provider.listDir(dir, { signal }), { ...(prune ? { prune } : {}), ...(onUnreadable ? { onUnreadable } : {}) });
          return;
        }
        yield* entries;
      })();
    },
  };
  return provider;
}
