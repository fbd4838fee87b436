import { writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteFs } from '../../src/backends/sqlite/index.js';
import { openSqlite, sqliteError } from '../../src/backends/sqlite/db.js';
import { LIST_PAGE, createSqliteStore } from '../../src/backends/sqlite/store.js';
import { FsError } from '../../src/seam/errors.js';
import { contentVersion } from '../../src/seam/index.js';
import { codeOf } from '../support/code-of.js';
import { tempSqlite } from './helpers.js';

const temps: { remove(): Promise<void> }[] = [];
const temp = async () => {
  const t = await tempSqlite('store');
  temps.push(t);
  return t;
};
afterEach(async () => {
  for (const t of temps.splice(0)) await t.remove();
});

describe('sqlite store', () => {
  it('lists a directory a page at a time; head gives sizes without the bytes', async () => {
    const { file } = await temp();
    const db = openSqlite(file, 'test');
    const store = createSqliteStore(db, 'w');
    const n = LIST_PAGE + 7;
    await store.transaction(async (tx) => {
      await tx.put('/d', { kind: 'directory' });
      for (let i = 0; i < n; i++) {
        const bytes = new Uint8Array(i % 5);
        await tx.put(`/d/f${String(i).padStart(4, '0')}`, { kind: 'file', bytes, version: contentVersion(bytes) });
      }
      await tx.put('/d/l', { kind: 'link', text: '../x' });
    });
    const names = await store.transaction(
      async (tx) => {
        const all: string[] = [];
        let next: string | undefined;
        let pages = 0;
        do {
          const page = await tx.list('/d', next);
          all.push(...page.children.map((c) => c.name));
          next = page.next;
          pages++;
        } while (next !== undefined);
        expect(pages).toBe(2);
        expect(await tx.head!('/d/f0004')).toMatchObject({ kind: 'file', size: 4 });
        expect(await tx.head!('/d/l')).toEqual({ kind: 'link', text: '../x' });
        expect(await tx.get('/nope')).toBeUndefined();
        return all;
      },
      { readOnly: true },
    );
    expect(new Set(names).size).toBe(n + 1);
    await store.close!();
  });

  it('a transaction whose body throws leaves nothing behind; the error passes unchanged', async () => {
    const { file } = await temp();
    const fs = createSqliteFs({ path: file });
    const db = openSqlite(file, 'test');
    const store = createSqliteStore(db, 'default');
    const boom = new Error('boom');
    const got = await store.transaction(async (tx) => {
      await tx.put('/a', { kind: 'directory' });
      throw boom;
    }).catch((e: unknown) => e);
    expect(got).toBe(boom);
    expect(await fs.stat(await fs.resolve('/a'))).toBeUndefined();
    await db.close();
    await fs.close();
  });

  it('workspaces in one file are apart', async () => {
    const { file } = await temp();
    const a = createSqliteFs({ path: file, workspace: 'a' });
    const b = createSqliteFs({ path: file, workspace: 'b' });
    await a.writeText(await a.resolve('/x.txt'), 'a');
    expect(await b.stat(await b.resolve('/x.txt'))).toBeUndefined();
    await a.close();
    // The connection stays open for b (shared in the process) until the last user closes.
    await b.writeText(await b.resolve('/x.txt'), 'b');
    await b.close();
    const again = createSqliteFs({ path: file, workspace: 'a' });
    expect((await again.readText(await again.resolve('/x.txt'))).text).toBe('a');
    await again.close();
  });

  it('SQLite errors never reach the caller raw', async () => {
    const { file } = await temp();
    await writeFile(file, 'this is not a database, but long enough to look like a header to nobody'.repeat(20));
    expect(() => createSqliteFs({ path: file })).toThrow(expect.objectContaining({ code: 'FS_IO_ERROR', message: expect.stringContaining(file) }));
    const busy = sqliteError(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }), 'cannot change workspace "w"');
    expect(busy).toBeInstanceOf(FsError);
    expect(busy.code).toBe('FS_CONFLICT');
    const other = await temp();
    const db = openSqlite(other.file, 'test');
    expect(await codeOf(db.transaction('a bad statement', (sql) => sql.run('SELECT * FROM no_such_table')))).toBe('FS_IO_ERROR');
    await db.close();
  });

  it('refuses a file made by a newer schema', async () => {
    const { file } = await temp();
    const db = openSqlite(file, 'test');
    await db.transaction('bump', (sql) => sql.run(`UPDATE dsh_fs_meta SET value = '99' WHERE key = 'schema_version'`));
    await db.close();
    expect(() => createSqliteFs({ path: file })).toThrow(expect.objectContaining({ code: 'FS_UNSUPPORTED', message: expect.stringMatching(/schema version 99/) }));
  });
});
