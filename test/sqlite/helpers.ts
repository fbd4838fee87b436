import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import type { ConformanceSubject } from '../../src/conformance/index.js';
import { createSqliteFs, type SqliteFileSystem } from '../../src/backends/sqlite/index.js';
import { openSqlite } from '../../src/backends/sqlite/db.js';
import { isFsError } from '../../src/seam/errors.js';

/** A new SQLite file in a temporary directory, and a way to remove both. */
export async function tempSqlite(label = 'ws'): Promise<{ file: string; dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `dsh-fs-sqlite-${label}-`));
  return { file: join(dir, `${label}.db`), dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Another writer on the same file: a second filesystem over it, which knows nothing of the first
 * one's state (the connection underneath is the process's one for the file).
 */
export function otherWriter(file: string, workspace: string) {
  const other = createSqliteFs({ path: file, workspace });
  const at = (path: string) => other.resolve(path);
  const orUndefined = async <T>(fn: () => Promise<T>) => {
    try {
      return await fn();
    } catch (err) {
      if (isFsError(err, 'FS_NOT_FOUND')) return undefined;
      throw err;
    }
  };
  return {
    fs: other,
    async writeBytes(path: string, bytes: Uint8Array, options?: { keepMtime?: boolean }) {
      const before = options?.keepMtime === true ? await orUndefined(async () => (await other.stat(await at(path)))?.mtimeMs) : undefined;
      await other.writeBytes(await at(path), bytes);
      if (before !== undefined) await setMtime(file, workspace, path, before);
    },
    remove: async (path: string) => other.remove(await at(path)),
    readBytes: (path: string) =>
      orUndefined(async () => {
        const target = await at(path);
        return (await other.stat(target))?.type === 'file' ? (await other.readBytes(target, { maxBytes: 1 << 30 })).bytes : undefined;
      }),
    mkdir: async (path: string) => other.mkdir(await at(path)),
    async symlink(text: string, path: string) {
      // As a process writing the file directly would: the link's directories first.
      const dirs: string[] = [];
      for (let p = posix.dirname(path); p !== '/'; p = posix.dirname(p)) dirs.unshift(p);
      for (const dir of dirs) if ((await other.stat(await at(dir))) === undefined) await other.mkdir(await at(dir));
      await other.symlink!(await other.resolve(path, { noFollow: true }), text);
    },
    close: () => other.close(),
  };
}

/** Puts back a file's mtime, as a writer that keeps it (same tick) would. */
async function setMtime(file: string, workspace: string, path: string, mtimeMs: number): Promise<void> {
  const db = openSqlite(file, 'test');
  try {
    await db.transaction('set mtime', (sql) => sql.run(`UPDATE dsh_fs_entries SET mtime = ? WHERE workspace = ? AND path = ?`, [mtimeMs, workspace, path]));
  } finally {
    await db.close();
  }
}

/** A conformance subject: a fresh file, its workspace rooted at `/`, the suite under /data. */
export async function sqliteSubject(): Promise<ConformanceSubject & { fs: SqliteFileSystem }> {
  const temp = await tempSqlite('conformance');
  const fs = createSqliteFs({ path: temp.file, workspace: 'w' });
  const other = otherWriter(temp.file, 'w');
  await fs.mkdir(await fs.resolve('/data'));
  return {
    fs,
    provider: fs.provider,
    base: '/data',
    outOfBand: { writeBytes: (p, b) => other.writeBytes(p, b), remove: other.remove, readBytes: other.readBytes },
    setup: { mkdir: other.mkdir, symlink: other.symlink },
    capabilities: { symlinks: true, linkCreation: true, executable: true },
    cleanup: async () => {
      await other.close();
      await fs.close();
      await temp.remove();
    },
  };
}
