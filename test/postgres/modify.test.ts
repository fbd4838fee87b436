import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresProvider, type PgQueryable } from '../../src/backends/postgres/index.js';
import { contentVersion, createFs, type FsProvider } from '../../src/seam/index.js';
import { codeOf } from '../support/code-of.js';
import { SERVER, SQL_INSERT_FILE, SQL_SET_CONTENT, blockedBy, closeShared, newWorkspace, rowHooks, sharedPglite, sharedPool, until } from './helpers.js';

const SUBJECTS: [string, () => Promise<PgQueryable> | PgQueryable][] = [
  ['PGlite', sharedPglite],
  ...(SERVER === undefined ? [] : ([['server', sharedPool]] as [string, () => PgQueryable][])),
];

afterAll(closeShared);

/** A seam over the PostgreSQL provider that counts which write primitive each call used. */
function counted(client: PgQueryable, workspace: string, maxTextBytes?: number) {
  const provider = createPostgresProvider({ client, workspace });
  const calls = { swap: 0, modify: 0, swapFrom: 0 };
  const wrapped: FsProvider = {
    ...provider,
    swap: (t, r) => (calls.swap++, provider.swap(t, r)),
    swapFrom: (t, r) => (calls.swapFrom++, provider.swapFrom!(t, r)),
    modify: (t, r, change) => (calls.modify++, provider.modify!(t, r, change)),
  };
  return { fs: createFs(wrapped, maxTextBytes === undefined ? {} : { maxTextBytes }), calls };
}

describe.each(SUBJECTS)('postgres modify over %s: read-modify-writes under the row lock', (_name, getClient) => {
  it('edits and text writes use modify, never swap, and keep the seam rules', async () => {
    const client = await getClient();
    const workspace = newWorkspace('modify');
    const { fs, calls } = counted(client, workspace, 64);
    const a = await fs.resolve('/d/a.txt');
    expect((await fs.writeText(a, 'one\r\ntwo\r\n')).operation).toBe('create');
    expect((await fs.writeText(a, 'uno\ndos\n')).operation).toBe('update');
    expect((await fs.readText(a)).text).toBe('uno\r\ndos\r\n'); // L5: the existing CRLF style, read under the lock
    const { version } = await fs.editText(a, { oldString: 'uno', newString: 'one' });
    await expect(fs.editText(a, { oldString: 'one', newString: '1' }, { version: contentVersion(new TextEncoder().encode('x')) })).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    await fs.editText(a, { oldString: 'one', newString: '1' }, { version });
    expect((await fs.readText(a)).text).toBe('1\r\ndos\r\n');
    expect(await codeOf(fs.editText(await fs.resolve('/d/none.txt'), { oldString: 'a', newString: 'b' }))).toBe('FS_NOT_FOUND');
    expect(await codeOf(fs.editText(await fs.resolve('/d'), { oldString: 'a', newString: 'b' }))).toBe('FS_NOT_REGULAR_FILE');
    expect(await codeOf(fs.writeText(a, 'x', { kind: 'createIfAbsent' }))).toBe('FS_NOT_OBSERVED');
    expect(await codeOf(fs.writeText(await fs.resolve('/d/a.txt/below'), 'x'))).toBe('FS_NOT_DIRECTORY');
    expect(calls.swap).toBe(0);

    // The seam's text limit reaches the provider: a larger file is not read whole by modify but
    // edited as a stream (V7), in one swapFrom.
    const modifies = calls.modify;
    await rowHooks(client, workspace).writeBytes('/d/big.txt', new TextEncoder().encode('x'.repeat(65)));
    expect((await fs.editText(await fs.resolve('/d/big.txt'), { oldString: 'x', newString: 'y', replaceAll: true })).replacements).toBe(65);
    expect(new TextDecoder().decode(await rowHooks(client, workspace).readBytes('/d/big.txt'))).toBe('y'.repeat(65));
    expect(calls.modify - modifies).toBeLessThanOrEqual(1);
    expect(calls.swapFrom).toBe(1);
    expect(calls.swap).toBe(0);
  });

  it('follows a link that appeared after the path was resolved, and creates the target of a dangling one', async () => {
    const client = await getClient();
    const workspace = newWorkspace('modify-link');
    const { fs } = counted(client, workspace);
    const hooks = rowHooks(client, workspace);
    const link = await fs.resolve('/l.txt');
    await hooks.writeBytes('/real.txt', new TextEncoder().encode('old\n'));
    await hooks.symlink('/real.txt', '/l.txt');
    await fs.editText(link, { oldString: 'old', newString: 'new' });
    expect(new TextDecoder().decode(await hooks.readBytes('/real.txt'))).toBe('new\n');
    const dangling = await fs.resolve('/m.txt');
    await hooks.symlink('/made.txt', '/m.txt');
    expect(await codeOf(fs.editText(dangling, { oldString: 'a', newString: 'b' }))).toBe('FS_NOT_FOUND');
    await fs.writeText(dangling, 'made\n');
    expect(new TextDecoder().decode(await hooks.readBytes('/made.txt'))).toBe('made\n');
  });
});

describe.runIf(SERVER !== undefined)('postgres modify against a server: the row lock', () => {
  const enc = new TextEncoder();

  it('an unguarded edit waits for a transaction that holds the row, then edits what it committed', async () => {
    const pool = sharedPool();
    const workspace = newWorkspace('rowlock');
    const { fs, calls } = counted(pool, workspace);
    const t = await fs.resolve('/a.txt');
    await fs.writeText(t, 'START\nEND\n');
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM dsh_fs_entries WHERE workspace = $1 AND path = '/a.txt' FOR UPDATE`, [workspace]);
      let settled = false;
      const edit = fs.editText(t, { oldString: '\nEND', newString: '\nmine\nEND' }).finally(() => (settled = true));
      await until(async () => (await blockedBy(pool, holder)).length > 0);
      const theirs = enc.encode('START\ntheirs\nEND\n');
      await holder.query(SQL_SET_CONTENT, [
        workspace,
        '/a.txt',
        Buffer.from(theirs),
        contentVersion(theirs),
        theirs.byteLength,
      ]);
      expect(settled).toBe(false);
      await holder.query('COMMIT');
      await edit;
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
    expect((await fs.readText(t)).text).toBe('START\ntheirs\nmine\nEND\n');
    expect(calls.swap).toBe(0);
  });

  it('a file another transaction creates meanwhile: the write waits for it, then changes the created file', async () => {
    const pool = sharedPool();
    const workspace = newWorkspace('rowlock-create');
    const { fs } = counted(pool, workspace);
    const t = await fs.resolve('/new.txt');
    const other = await fs.resolve('/other.txt');
    const holder = await pool.connect();
    const crlf = enc.encode('a\r\nb\r\n');
    const insert = (path: string) =>
      holder.query(SQL_INSERT_FILE, [
        workspace,
        path,
        '/',
        Buffer.from(crlf),
        contentVersion(crlf),
        crlf.byteLength,
      ]);
    try {
      await holder.query('BEGIN');
      await insert('/new.txt');
      await insert('/other.txt');
      const write = fs.writeText(t, 'x\ny\n');
      const create = codeOf(fs.writeText(other, 'z\n', { kind: 'createIfAbsent' }));
      await until(async () => (await blockedBy(pool, holder)).length === 2);
      await holder.query('COMMIT');
      // Its insert found the committed row: it locked that row and wrote over it, in its line endings (L5).
      expect((await write).operation).toBe('update');
      expect(await create).toBe('FS_NOT_OBSERVED');
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
    expect((await fs.readText(t)).text).toBe('x\r\ny\r\n');
    expect((await fs.readText(other)).text).toBe('a\r\nb\r\n');
  });

  it('an edit aborted while it waits for the lock hands its connection back outside any transaction', async () => {
    const pool = new pg.Pool({ connectionString: SERVER, max: 2 });
    const other = sharedPool();
    const workspace = newWorkspace('rowlock-abort');
    const { fs } = counted(pool, workspace);
    const t = await fs.resolve('/a.txt');
    await fs.writeText(t, 'one\n');
    const holder = await other.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM dsh_fs_entries WHERE workspace = $1 AND path = '/a.txt' FOR UPDATE`, [workspace]);
      const controller = new AbortController();
      const edit = codeOf(fs.editText(t, { oldString: 'one', newString: 'two' }, undefined, { signal: controller.signal }));
      await until(async () => (await blockedBy(other, holder)).length > 0);
      controller.abort();
      expect(await edit).toBe('FS_ABORTED');
      await until(async () => (await blockedBy(other, holder)).length === 0);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    try {
      // Every connection of the pool, taken at once: none is left in the aborted transaction.
      await until(async () => pool.idleCount === pool.totalCount);
      const conns = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
      const states = await Promise.all(conns.map((c) => c.query('SELECT 1 AS one').then(() => 'ok', (err: { code?: string }) => err.code)));
      for (const c of conns) c.release();
      expect(states.every((s) => s === 'ok'), states.join(', ')).toBe(true);
      expect((await fs.readText(t)).text).toBe('one\n');
    } finally {
      await pool.end();
    }
  });
});
