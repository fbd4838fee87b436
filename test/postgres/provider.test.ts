import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresFs, createPostgresProvider, type PgQueryable } from '../../src/backends/postgres/index.js';
import { SCHEMA_VERSION } from '../../src/backends/postgres/schema.js';
import { contentVersion, createFs, isFsError, type FileSystem, type FsErrorCode } from '../../src/seam/index.js';
import { SERVER, blockedBy, closeShared, newWorkspace, processId, rowHooks, sharedPglite, sharedPool } from './helpers.js';
import { codeOf } from '../support/code-of.js';


const read = async (fs: FileSystem, path: string) => {
  try {
    return (await fs.readText(await fs.resolve(path))).text;
  } catch (err) {
    if (isFsError(err, 'FS_NOT_FOUND')) return undefined;
    throw err;
  }
};
const write = async (fs: FileSystem, path: string, text: string) => fs.writeText(await fs.resolve(path), text);

/** Wraps a client to count the statements each operation sends. */
function counting(client: PgQueryable) {
  const seen: string[] = [];
  return {
    seen,
    client: {
      query(text: string, values?: unknown[]) {
        seen.push(text.trim().split(/\s+/).slice(0, 2).join(' '));
        return client.query(text, values);
      },
    } satisfies PgQueryable,
  };
}

const SUBJECTS: [string, () => Promise<PgQueryable> | PgQueryable][] = [
  ['PGlite', sharedPglite],
  ...(SERVER === undefined ? [] : ([['server', sharedPool]] as [string, () => PgQueryable][])),
];

afterAll(closeShared);

describe.each(SUBJECTS)('postgres provider over %s', (_name, getClient) => {
  it('creates the schema once, versioned, when several providers start at once', async () => {
    const client = await getClient();
    const fss = Array.from({ length: 4 }, () => createPostgresFs({ client, workspace: newWorkspace('schema') }));
    await Promise.all(fss.map((fs) => fs.provider.ready()));
    const { rows } = await client.query(`SELECT value FROM dsh_fs_meta WHERE key = 'schema_version'`);
    expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
  });

  it('keeps workspaces apart and shares one workspace between providers (machines)', async () => {
    const client = await getClient();
    const workspace = newWorkspace('share');
    const a = createPostgresFs({ client, workspace });
    const b = createPostgresFs({ client, workspace });
    const c = createPostgresFs({ client, workspace: newWorkspace('share') });
    await write(a, '/x/f.txt', 'one\n');
    expect(await read(b, '/x/f.txt')).toBe('one\n');
    expect(await read(c, '/x/f.txt')).toBeUndefined();

    // Compare-and-swap across providers: b's guard from a version a has since replaced is refused.
    const seen = await b.readText(await b.resolve('/x/f.txt'));
    await write(a, '/x/f.txt', 'two\n');
    expect(await codeOf(b.writeText(await b.resolve('/x/f.txt'), 'three\n', { kind: 'replaceIfVersion', version: seen.version }))).toBe('FS_STALE_VERSION');
    expect(await codeOf(b.writeText(await b.resolve('/x/f.txt'), 'three\n', { kind: 'createIfAbsent' }))).toBe('FS_NOT_OBSERVED');
    expect(await read(a, '/x/f.txt')).toBe('two\n');
  });

  it('stores one row per entry with the seam\'s content version, and a version SQL can compute the same way', async () => {
    const client = await getClient();
    const workspace = newWorkspace('rows');
    const fs = createPostgresFs({ client, workspace, root: '/r' });
    const bytes = new Uint8Array([0, 1, 2, 250, 251, 252]);
    await fs.writeBytes(await fs.resolve('/r/d/e/f.bin'), bytes);
    const { rows } = await client.query(
      `SELECT path, parent, kind, version, size,
         'sha256:' || rtrim(translate(encode(sha256(
           (SELECT string_agg(c.bytes, ''::bytea ORDER BY c.pos) FROM dsh_fs_chunks c WHERE c.blob = e.blob)), 'base64'), '+/', '-_'), '=') AS sql_version
       FROM dsh_fs_entries e WHERE workspace = $1 ORDER BY path`,
      [workspace],
    );
    expect(rows.map((r) => `${r.path} ${r.parent} ${r.kind}`)).toEqual([
      '/ null directory',
      '/r / directory',
      '/r/d /r directory',
      '/r/d/e /r/d directory',
      '/r/d/e/f.bin /r/d/e file',
    ]);
    const file = rows.at(-1)!;
    expect(file.version).toBe(contentVersion(bytes));
    expect(file.sql_version).toBe(file.version);
    expect(Number(file.size)).toBe(6);
  });

  it('lists with one query and walks a subtree with one query, in tree order (a/b before a-b)', async () => {
    const base = await getClient();
    const workspace = newWorkspace('walk');
    const setup = createPostgresFs({ client: base, workspace });
    for (const p of ['/t/a/b', '/t/a-b', '/t/a.b', '/t/a/c/d', '/t/ab', '/t/é', '/t/z', '/t/a/😀', '/t/a/\uffff']) await write(setup, p, p);
    const { client, seen } = counting(base);
    const fs = createPostgresFs({ client, workspace });
    await fs.provider.ready();
    const top = await fs.resolve('/t');

    seen.length = 0;
    const walked: string[] = [];
    for await (const e of fs.walk(top)) walked.push(`${e.path}:${e.type}`);
    expect(seen).toHaveLength(1);
    expect(walked).toEqual([
      'a:directory',
      'a/b:file',
      'a/c:directory',
      'a/c/d:file',
      'a/\uffff:file',
      'a/😀:file',
      'a-b:file',
      'a.b:file',
      'ab:file',
      'z:file',
      'é:file',
    ]);

    seen.length = 0;
    const listed = (await fs.listDir(top)).map((e) => e.name);
    expect(seen).toHaveLength(1);
    expect(listed).toEqual(['a', 'a-b', 'a.b', 'ab', 'z', 'é']);

    // A conditional write is one statement (the row's UPDATE with its chunks' INSERT in a CTE).
    const f = await fs.resolve('/t/z');
    const { version } = await fs.readText(f);
    seen.length = 0;
    await fs.writeBytes(f, Buffer.from('new'), { kind: 'replaceIfVersion', version });
    expect(seen).toEqual(['WITH upd']);
  });

  it('refuses files past maxFileBytes with FS_TOO_LARGE and writes nothing', async () => {
    const client = await getClient();
    const fs = createPostgresFs({ client, workspace: newWorkspace('large'), maxFileBytes: 1024 });
    const t = await fs.resolve('/big.bin');
    expect(await codeOf(fs.writeBytes(t, new Uint8Array(1025)))).toBe('FS_TOO_LARGE');
    expect(await fs.stat(t)).toBeUndefined();
    await fs.writeBytes(t, new Uint8Array(1024));
    expect(await codeOf(fs.readBytes(t, { maxBytes: 100 }))).toBe('FS_TOO_LARGE');
  });

  it('keeps the tree whole: a parent that is a file, a file under a link, a non-empty rmdir, a directory rename', async () => {
    const client = await getClient();
    const workspace = newWorkspace('tree');
    const fs = createPostgresFs({ client, workspace, root: '/w' });
    const hooks = rowHooks(client, workspace);
    await write(fs, '/w/f.txt', 'f');
    expect(await codeOf(write(fs, '/w/f.txt/x', 'x'))).toBe('FS_NOT_DIRECTORY');
    expect(await codeOf(fs.mkdir(await fs.resolve('/w/f.txt/d')))).toBe('FS_NOT_DIRECTORY');
    await write(fs, '/w/d/e/g.txt', 'g');
    expect(await codeOf(fs.rmdir(await fs.resolve('/w/d')))).toBe('FS_NOT_EMPTY');
    await fs.rename(await fs.resolve('/w/d'), await fs.resolve('/w/m/n'));
    expect(await read(fs, '/w/m/n/e/g.txt')).toBe('g');
    expect(await fs.stat(await fs.resolve('/w/d'))).toBeUndefined();
    // A link out of the root is refused; one inside is followed for reads and writes.
    await hooks.symlink('/elsewhere', '/w/out');
    await hooks.symlink('m/n', '/w/in');
    expect(await codeOf(fs.resolve('/w/out/x'))).toBe('FS_OUTSIDE_ROOT');
    expect(await read(fs, '/w/in/e/g.txt')).toBe('g');
    await write(fs, '/w/in/e/h.txt', 'h');
    expect(await read(fs, '/w/m/n/e/h.txt')).toBe('h');
    await fs.rmdir(await fs.resolve('/w/m'), { recursive: true });
    const { rows } = await client.query(`SELECT path FROM dsh_fs_entries WHERE workspace = $1 ORDER BY path`, [workspace]);
    expect(rows.map((r) => r.path)).toEqual(['/', '/w', '/w/f.txt', '/w/in', '/w/out']);
  });

  it('answers an AbortSignal at once with FS_ABORTED', async () => {
    const base = await getClient();
    const workspace = newWorkspace('abort');
    await createPostgresFs({ client: base, workspace }).provider.ready();
    // A client whose statements never finish: only the signal can end the call.
    const stuck: PgQueryable = { query: () => new Promise(() => {}) };
    const fs = createFs(createPostgresProvider({ client: stuck, workspace }));
    const controller = new AbortController();
    const pending = codeOf(fs.resolve('/a.txt', { signal: controller.signal }));
    controller.abort();
    expect(await pending).toBe('FS_ABORTED');
  });
});

describe('postgres provider errors', () => {
  it('turns a refused connection into FS_IO_ERROR naming the cause, never a raw error', async () => {
    const pool = new pg.Pool({ host: '127.0.0.1', port: 1, user: 'nobody', database: 'none', connectionTimeoutMillis: 5000 });
    try {
      const fs = createPostgresFs({ client: pool, workspace: 'w' });
      const failure = await fs.resolve('/a').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isFsError(failure, 'FS_IO_ERROR')).toBe(true);
      expect((failure as Error).message).toMatch(/ECONNREFUSED/);
    } finally {
      await pool.end();
    }
  });

  it('refuses a database whose schema is newer than this version understands', async () => {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create();
    try {
      await db.query(`CREATE TABLE dsh_fs_meta (key text PRIMARY KEY, value text NOT NULL)`);
      await db.query(`INSERT INTO dsh_fs_meta VALUES ('schema_version', '99')`);
      const fs = createPostgresFs({ client: db, workspace: 'w' });
      const failure = await fs.resolve('/a').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isFsError(failure, 'FS_IO_ERROR')).toBe(true);
      expect((failure as Error).message).toMatch(/schema version 99/);
    } finally {
      await db.close();
    }
  });

  it('maps SQL failures to FsError codes', async () => {
    const failing = (code: string, message: string): PgQueryable => ({
      query: async () => {
        throw Object.assign(new Error(message), { code });
      },
    });
    const cases: [string, string, FsErrorCode, RegExp][] = [
      ['57P01', 'terminating connection due to administrator command', 'FS_IO_ERROR', /connection to PostgreSQL/],
      ['08006', 'connection failure', 'FS_IO_ERROR', /connection to PostgreSQL/],
      ['57014', 'canceling statement due to statement timeout', 'FS_IO_ERROR', /statement timeout/],
      ['25006', 'cannot execute INSERT in a read-only transaction', 'FS_READ_ONLY', /read-only/],
      ['42501', 'permission denied for table dsh_fs_entries', 'FS_PERMISSION_DENIED', /permission denied/],
    ];
    for (const [code, message, expected, text] of cases) {
      const fs = createPostgresFs({ client: failing(code, message), workspace: 'w' });
      const failure = await fs.resolve('/a').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isFsError(failure, expected), `${code}: ${String(failure)}`).toBe(true);
      expect((failure as Error).message).toMatch(text);
    }
  });
});

describe.runIf(SERVER !== undefined)('postgres provider against a server: cancellation', () => {
  it('cancels a statement blocked on a row lock when the signal fires, and the pool stays usable', async () => {
    const pool = sharedPool();
    const workspace = newWorkspace('cancel');
    const fs = createPostgresFs({ client: pool, workspace });
    const t = await fs.resolve('/locked.txt');
    await fs.writeText(t, 'one');
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM dsh_fs_entries WHERE workspace = $1 AND path = '/locked.txt' FOR UPDATE`, [workspace]);
      const controller = new AbortController();
      const write = codeOf(fs.writeText(t, 'two', undefined, { signal: controller.signal }));
      // Wait until the write is waiting for the lock on the server.
      for (;;) {
        if ((await blockedBy(pool, holder)).length > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      controller.abort();
      expect(await write).toBe('FS_ABORTED');
      // The server cancelled the statement: nothing waits on the lock any more.
      for (;;) {
        if ((await blockedBy(pool, holder)).length === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await read(fs, '/locked.txt')).toBe('one');
    await fs.writeText(t, 'three');
    expect(await read(fs, '/locked.txt')).toBe('three');
  });

  it('reports a connection the server ended mid-statement as FS_IO_ERROR, and goes on with a new one', async () => {
    const pool = new pg.Pool({ connectionString: SERVER, max: 2 });
    pool.on('error', () => {}); // idle clients the server ends are the application's to log
    const other = sharedPool();
    const workspace = newWorkspace('terminate');
    const fs = createPostgresFs({ client: pool, workspace });
    const t = await fs.resolve('/locked.txt');
    await fs.writeText(t, 'one');
    const holder = await other.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM dsh_fs_entries WHERE workspace = $1 AND path = '/locked.txt' FOR UPDATE`, [workspace]);
      const write = fs.writeText(t, 'two').then(
        () => undefined,
        (e: unknown) => e,
      );
      for (;;) {
        const { rows } = await other.query(
          `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`,
          [processId(holder)],
        );
        if (rows.length > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const failure = await write;
      expect(isFsError(failure, 'FS_IO_ERROR'), String(failure)).toBe(true);
      expect((failure as Error).message).toMatch(/connection to PostgreSQL/);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    await fs.writeText(t, 'three');
    expect(await read(fs, '/locked.txt')).toBe('three');
    await pool.end();
  });

  it('works over a single pg Client too (statements and transactions queued on its one connection)', async () => {
    const client = new pg.Client({ connectionString: SERVER });
    await client.connect();
    try {
      const fs = createPostgresFs({ client, workspace: newWorkspace('client') });
      await Promise.all(Array.from({ length: 8 }, (_, i) => write(fs, `/c/d${i % 2}/f${i}.txt`, `${i}`)));
      await Promise.all([fs.rename(await fs.resolve('/c/d0'), await fs.resolve('/c/e0')), write(fs, '/c/d1/f1.txt', 'one')]);
      expect(await read(fs, '/c/e0/f2.txt')).toBe('2');
      expect(await read(fs, '/c/d1/f1.txt')).toBe('one');
    } finally {
      await client.end();
    }
  });

  it('reports a statement timeout as FS_IO_ERROR naming it', async () => {
    const pool = new pg.Pool({ connectionString: SERVER, statement_timeout: 200, max: 2 });
    const other = sharedPool();
    const workspace = newWorkspace('timeout');
    const fs = createPostgresFs({ client: pool, workspace });
    const t = await fs.resolve('/locked.txt');
    await fs.writeText(t, 'one');
    const holder = await other.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM dsh_fs_entries WHERE workspace = $1 AND path = '/locked.txt' FOR UPDATE`, [workspace]);
      const failure = await fs.writeText(t, 'two').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isFsError(failure, 'FS_IO_ERROR')).toBe(true);
      expect((failure as Error).message).toMatch(/statement timeout/);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
      await pool.end();
    }
  });
});
