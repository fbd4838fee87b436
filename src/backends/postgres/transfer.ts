/**
 * Copying a host directory tree into a workspace and out again: files (with their modification
 * times), directories and symbolic links. The FileSystem contract has no symlinks, so this works
 * on the rows directly.
 */
import { lstat, mkdir, readFile, readdir, readlink, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, resolve as resolveHost, sep } from 'node:path';
import { FsError, contentVersion, isExecutableMode, toFsError } from '../../seam/index.js';
import { Db, type PgQueryable, type Q } from './client.js';
import { DEFAULT_MAX_FILE_BYTES } from './provider.js';
import { wholeContent } from './content.js';
import { BLOB_IDS, CHUNKS, CHUNK_BYTES, ENTRIES, ensureSchema } from './schema.js';

export interface TransferOptions {
  readonly client: PgQueryable;
  readonly workspace: string;
  /** The host directory copied from (import) or to (export). */
  readonly dir: string;
  /**
   * Allow a target that is not empty: what is copied replaces what is at the same path there;
   * nothing else is removed. Without it, a non-empty target is refused with `FS_ALREADY_EXISTS`.
   */
  readonly overwrite?: boolean;
  /** Import: larger files are refused with `FS_TOO_LARGE` (default: the backend's 64 MiB). */
  readonly maxFileBytes?: number;
  readonly signal?: AbortSignal;
}

export interface TransferReport {
  readonly files: number;
  readonly directories: number;
  readonly symlinks: number;
  /** Bytes of file content copied. */
  readonly bytes: number;
  /** What was not copied, with why (workspace paths). */
  readonly skipped: ReadonlyArray<{ readonly path: string; readonly reason: string }>;
}

/**
 * Copies the tree at `dir` into the workspace's root, in one transaction: the workspace shows all
 * of it or, after a failure, none of it. Links whose target lies outside `dir` are skipped (they
 * would lead elsewhere in the workspace); an absolute link inside `dir` is stored as the workspace
 * path it names. Sockets, FIFOs and devices are skipped.
 */
export async function importTree(options: TransferOptions): Promise<TransferReport> {
  const { client, workspace, signal } = options;
  const dir = resolveHost(options.dir);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const what = `cannot import "${dir}" into the workspace "${workspace}"`;
  const st = await lstat(dir).catch((err: unknown) => {
    throw toFsError(err, what);
  });
  if (!st.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
  const db = new Db(client);
  await ensureSchema(db);
  let files = 0;
  let directories = 0;
  let symlinks = 0;
  let bytes = 0;
  const skipped: Array<{ path: string; reason: string }> = [];
  await db.transaction(what, signal, async (q) => {
    // Concurrent importers of one workspace go one at a time (the check below must hold until commit).
    await q('SELECT pg_advisory_xact_lock(hashtext($1))', [`dsh-fs import ${workspace}`]);
    await q(`INSERT INTO ${ENTRIES} (workspace, path, parent, kind) VALUES ($1, '/', NULL, 'directory') ON CONFLICT (workspace, path) DO NOTHING`, [workspace]);
    if (options.overwrite !== true) {
      const rows = await q(`SELECT path FROM ${ENTRIES} WHERE workspace = $1 AND path <> '/' LIMIT 1`, [workspace]);
      if (rows.length > 0) throw new FsError('FS_ALREADY_EXISTS', `${what}: the workspace is not empty (it has "${rows[0].path}"); allow that with overwrite`);
    }
    const visit = async (hostDir: string, wsDir: string): Promise<void> => {
      let names: string[];
      try {
        names = (await readdir(hostDir)).sort();
      } catch (err) {
        throw toFsError(err, `${what}: cannot list "${hostDir}"`);
      }
      for (const name of names) {
        if (signal?.aborted) throw new FsError('FS_ABORTED', `${what}: aborted`);
        const host = join(hostDir, name);
        const path = posix.join(wsDir, name);
        const info = await lstat(host).catch((err: unknown) => {
          throw toFsError(err, `${what}: cannot read "${host}"`);
        });
        if (options.overwrite === true && !info.isDirectory()) {
          // A directory replaced by a file or link would orphan its children: refused up front.
          const rows = await q(`SELECT kind FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`, [workspace, path]);
          if (rows[0]?.kind === 'directory') throw new FsError('FS_CONFLICT', `${what}: "${path}" is a directory in the workspace and not in "${dir}"`);
        }
        if (info.isDirectory()) {
          await upsert(q, workspace, path, 'directory', null, null, info.mtimeMs);
          directories++;
          await visit(host, path);
        } else if (info.isFile()) {
          if (info.size > maxFileBytes) throw new FsError('FS_TOO_LARGE', `${what}: "${host}" is ${info.size} bytes, more than the ${maxFileBytes} a file may have`);
          const content = await readFile(host).catch((err: unknown) => {
            throw toFsError(err, `${what}: cannot read "${host}"`);
          });
          await upsert(q, workspace, path, 'file', content, null, info.mtimeMs, isExecutableMode(info.mode));
          files++;
          bytes += content.byteLength;
        } else if (info.isSymbolicLink()) {
          const text = await readlink(host).catch((err: unknown) => {
            throw toFsError(err, `${what}: cannot read the link "${host}"`);
          });
          const at = isAbsolute(text) ? text : resolveHost(hostDir, text);
          const inside = relative(dir, at);
          if (inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
            skipped.push({ path, reason: `a symbolic link to "${text}", outside the directory imported` });
            continue;
          }
          const link = isAbsolute(text) ? `/${inside.split(sep).join('/')}` : text.split(sep).join('/');
          await upsert(q, workspace, path, 'symlink', null, link, info.mtimeMs);
          symlinks++;
        } else {
          skipped.push({ path, reason: 'not a file, directory or symbolic link' });
        }
      }
    };
    await visit(dir, '/');
  });
  return { files, directories, symlinks, bytes, skipped };
}

async function upsert(
  q: Q,
  workspace: string,
  path: string,
  kind: 'file' | 'directory' | 'symlink',
  content: Buffer | null,
  link: string | null,
  mtimeMs: number,
  executable = false,
): Promise<void> {
  const version = content === null ? null : contentVersion(content);
  const size = content === null ? null : content.byteLength;
  // A directory already there stays (with its children); anything else is replaced (a file's old
  // chunks dropped by the trigger). A kind change under a directory with children is refused by
  // the foreign key (the whole import fails). A file's content is stored as chunks of its new blob.
  await q(
    `WITH up AS (INSERT INTO ${ENTRIES} (workspace, path, parent, kind, blob, link, version, size, mtime, executable)
       VALUES ($1, $2, $3, $4, CASE WHEN $4 = 'file' THEN nextval('${BLOB_IDS}') END, $6, $7, $8, to_timestamp($9::float8 / 1000), $10)
       ON CONFLICT (workspace, path) DO UPDATE SET kind = EXCLUDED.kind, blob = EXCLUDED.blob, link = EXCLUDED.link,
         version = EXCLUDED.version, size = EXCLUDED.size, mtime = EXCLUDED.mtime, executable = EXCLUDED.executable
       WHERE NOT (${ENTRIES}.kind = 'directory' AND EXCLUDED.kind = 'directory')
       RETURNING blob)
     INSERT INTO ${CHUNKS} (blob, pos, bytes)
     SELECT up.blob, g.pos, substring($5::bytea FROM g.pos::int + 1 FOR ${CHUNK_BYTES})
     FROM up, generate_series(0::bigint, coalesce(octet_length($5::bytea), 0)::bigint - 1, ${CHUNK_BYTES}) AS g(pos) WHERE up.blob IS NOT NULL`,
    [workspace, path, posix.dirname(path), kind, content, link, version, size, mtimeMs, executable],
  );
}

/**
 * Copies the workspace's tree into the host directory `dir` (created if missing). Without
 * `overwrite`, a `dir` that exists and is not empty is refused. With it, what is copied replaces
 * what is at the same path (a link there is replaced, never followed); nothing else is removed.
 * An absolute link is written relative to its directory, so the copy can be moved.
 */
export async function exportTree(options: TransferOptions): Promise<TransferReport> {
  const { client, workspace, signal } = options;
  const dir = resolveHost(options.dir);
  const what = `cannot export the workspace "${workspace}" to "${dir}"`;
  const db = new Db(client);
  await ensureSchema(db);
  const existing = await lstat(dir).catch(() => undefined);
  if (existing !== undefined && !existing.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: it is not a directory`);
  if (existing !== undefined && options.overwrite !== true) {
    const names = await readdir(dir).catch((err: unknown) => {
      throw toFsError(err, what);
    });
    if (names.length > 0) throw new FsError('FS_ALREADY_EXISTS', `${what}: the directory is not empty; allow that with overwrite`);
  }
  // Paths sort bytewise, so every directory comes before what it holds. Content is fetched in batches.
  const rows = await db.session(what, signal, (q) =>
    q(`SELECT path, kind, link, size::float8 AS size, executable, (extract(epoch FROM mtime) * 1000)::float8 AS mtime_ms FROM ${ENTRIES} WHERE workspace = $1 ORDER BY path`, [workspace]),
  );
  if (rows.length === 0) throw new FsError('FS_NOT_FOUND', `${what}: there is no such workspace`);
  let files = 0;
  let directories = 0;
  let symlinks = 0;
  let bytes = 0;
  const hostPath = (path: string) => (path === '/' ? dir : join(dir, ...path.slice(1).split('/')));
  // Anything but a real directory at `host` goes (overwrite only reaches here with a non-empty dir).
  const clear = async (host: string, keepDir: boolean) => {
    const now = await lstat(host).catch(() => undefined);
    if (now === undefined) return;
    if (now.isDirectory()) {
      if (keepDir) return;
      throw new FsError('FS_NOT_REGULAR_FILE', `${what}: "${host}" is a directory`);
    }
    await rm(host, { force: true });
  };
  try {
    await mkdir(dir, { recursive: true });
    const files_: Array<{ path: string; mtimeMs: number; executable: boolean }> = [];
    for (const row of rows) {
      if (signal?.aborted) throw new FsError('FS_ABORTED', `${what}: aborted`);
      const host = hostPath(row.path);
      if (row.kind === 'directory') {
        if (row.path === '/') continue;
        await clear(host, true);
        await mkdir(host, { recursive: true });
        directories++;
      } else if (row.kind === 'symlink') {
        await clear(host, false);
        const text: string = row.link;
        await symlink(text.startsWith('/') ? posix.relative(posix.dirname(row.path), text) || '.' : text, host);
        symlinks++;
      } else {
        files_.push({ path: row.path, mtimeMs: row.mtime_ms, executable: row.executable === true });
      }
    }
    const BATCH = 200;
    for (let i = 0; i < files_.length; i += BATCH) {
      const batch = files_.slice(i, i + BATCH);
      const contents = await db.session(what, signal, (q) =>
        q(`SELECT path, ${wholeContent('e.blob')} AS content FROM ${ENTRIES} e WHERE workspace = $1 AND path = ANY($2::text[]) AND kind = 'file'`, [workspace, batch.map((f) => f.path)]),
      );
      const byPath = new Map(contents.map((r) => [r.path as string, r.content as Uint8Array]));
      for (const f of batch) {
        const content = byPath.get(f.path);
        if (content === undefined) continue; // removed meanwhile
        const host = hostPath(f.path);
        await clear(host, false);
        // As `chmod +x` under the process's umask would leave it.
        await writeFile(host, content, { flag: 'wx', ...(f.executable ? { mode: 0o777 } : {}) });
        const when = new Date(f.mtimeMs);
        await utimes(host, when, when);
        files++;
        bytes += content.byteLength;
      }
    }
  } catch (err) {
    throw toFsError(err, what);
  }
  return { files, directories, symlinks, bytes, skipped: [] };
}
