import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import {
  createPostgresFs,
  createPostgresUpperStore,
  type PgQueryable,
  type PostgresUpperStore,
} from '../../src/backends/postgres/index.js';
import { SCHEMA_VERSION } from '../../src/backends/postgres/schema.js';
import { sandboxLockKey } from '../../src/backends/postgres/upper.js';
import { codeOf } from '../support/code-of.js';
import { RUNS } from '../overlay/helpers.js';
import { crashAfter, describeUpperStoreKit, type StoreBacking } from '../overlay/store-kit.js';
import { SERVER, closeShared, newWorkspace, sharedPglite, sharedPool } from './helpers.js';

/** A database as schema version 1 left it, with one workspace. */
const VERSION_1 = `CREATE TABLE dsh_fs_meta (key text PRIMARY KEY, value text NOT NULL);
  INSERT INTO dsh_fs_meta VALUES ('schema_version', '1');
  CREATE TABLE dsh_fs_entries (workspace text NOT NULL, path text COLLATE "C" NOT NULL, parent text COLLATE "C",
    parent_kind text NOT NULL DEFAULT 'directory', kind text NOT NULL, content bytea, link text, version text, size integer,
    mtime timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (workspace, path), UNIQUE (workspace, path, kind),
    FOREIGN KEY (workspace, parent, parent_kind) REFERENCES dsh_fs_entries (workspace, path, kind));
  CREATE INDEX dsh_fs_entries_parent ON dsh_fs_entries (workspace, parent, path);
  INSERT INTO dsh_fs_entries (workspace, path, parent, kind) VALUES ('old', '/', NULL, 'directory');
  INSERT INTO dsh_fs_entries (workspace, path, parent, kind, content, version, size) VALUES ('old', '/run.sh', '/', 'file', 'x', 'v1', 1);`;

/** Each place is a fresh sandbox name; opening it again ends the earlier "processes" (they let go of the lock). */
function pgBacking(client: () => Promise<PgQueryable> | PgQueryable, runsFactor?: number): StoreBacking & { end(): Promise<void> } {
  // Each lock holds a pooled connection: the stores of the previous place let go of theirs.
  const open: PostgresUpperStore[] = [];
  return {
    ...(runsFactor === undefined ? {} : { runsFactor }),
    async end() {
      for (const s of open.splice(0)) await s.unlock();
    },
    async fresh() {
      for (const s of open.splice(0)) await s.unlock();
      const c = await client();
      const sandbox = newWorkspace('sandbox');
      const next = async () => {
        // Every earlier store: one that was let go may have taken the lock again since.
        for (const s of open) await s.unlock();
        const s = createPostgresUpperStore({ client: c, sandbox });
        open.push(s);
        return s;
      };
      return {
        open: next,
        // A crashed process's connection is gone, and its lock with it.
        crashing: async (crashAt, tear) => {
          const s = await next();
          return crashAfter(s, crashAt, tear, () => s.unlock());
        },
      };
    },
  };
}

describeUpperStoreKit('PostgreSQL (PGlite)', pgBacking(sharedPglite));

describe.runIf(SERVER !== undefined)('against DSH_FS_TEST_PG', () => {
  const backing = pgBacking(sharedPool, 0.25);
  afterAll(async () => {
    await backing.end();
    await closeShared();
  });
  describeUpperStoreKit('PostgreSQL (server)', backing);

  it('migrates a version-1 database once when 6 processes (pools) start at once', async () => {
    const name = `dshfs_migrate_${process.pid}_${Date.now()}`;
    await sharedPool().query(`CREATE DATABASE ${name}`);
    const url = new URL(SERVER!);
    url.pathname = `/${name}`;
    const pools = Array.from({ length: 6 }, () => new pg.Pool({ connectionString: url.toString(), max: 2 }));
    try {
      await pools[0]!.query(VERSION_1);
      const stores = pools.map((client, i) => createPostgresUpperStore({ client, sandbox: `s${i}` }));
      await Promise.all(stores.map((s, i) => s.writeState(new Uint8Array([i]))));
      const { rows } = await pools[0]!.query(`SELECT value FROM dsh_fs_meta WHERE key = 'schema_version'`);
      expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
      for (const [i, s] of stores.entries()) expect(await s.readState()).toEqual(new Uint8Array([i]));
      const old = createPostgresFs({ client: pools[1]!, workspace: 'old' });
      // Version 3 gave every file an executable bit, clear for the files already there.
      expect((await old.listDir(await old.resolve('/'))).map((e) => [e.name, e.executable])).toEqual([['run.sh', false]]);
      await old.setExecutable!(await old.resolve('/run.sh'), true);
      expect((await old.stat(await old.resolve('/run.sh')))?.executable).toBe(true);
      for (const s of stores) await s.unlock();
    } finally {
      for (const p of pools) await p.end();
      await sharedPool().query(`DROP DATABASE ${name}`);
    }
  });

  it('a second process (another connection) cannot write the sandbox while the first holds it: FS_CONFLICT naming the holder', async () => {
    const other = new pg.Pool({ connectionString: SERVER, max: 2, application_name: 'second-host' });
    try {
      const sandbox = newWorkspace('lock');
      const first = createPostgresUpperStore({ client: sharedPool(), sandbox });
      const second = createPostgresUpperStore({ client: other, sandbox });
      await first.writeState(new Uint8Array([1]));
      expect(first.locked).toBe(true);
      const err = await second.writeState(new Uint8Array([2])).catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe('FS_CONFLICT');
      expect(String((err as Error).message)).toMatch(/locked by PostgreSQL backend \d+/);
      expect(await codeOf(second.lock({ timeoutMs: 50 }))).toBe('FS_CONFLICT');
      // Reading (a review) needs no lock.
      expect(await second.readState()).toEqual(new Uint8Array([1]));
      await first.unlock();
      await second.writeState(new Uint8Array([3]));
      expect(await first.readState()).toEqual(new Uint8Array([3]));
      await second.unlock();
    } finally {
      await other.end();
    }
  });

  it('a waiting lock() gets the lock once the holder lets go', async () => {
    const sandbox = newWorkspace('lock-wait');
    const first = createPostgresUpperStore({ client: sharedPool(), sandbox });
    const other = new pg.Pool({ connectionString: SERVER, max: 2 });
    try {
      const second = createPostgresUpperStore({ client: other, sandbox });
      await first.lock();
      let waited = '';
      const taking = second.lock({ timeoutMs: 60_000, onWait: (h) => (waited = h) });
      await new Promise((r) => setTimeout(r, 100));
      await first.unlock();
      await taking;
      expect(second.locked).toBe(true);
      expect(waited).toMatch(/PostgreSQL backend/);
      await second.unlock();
    } finally {
      await other.end();
    }
  });

  it('the lock dies with its connection (a killed process), and the dead holder cannot write after', async () => {
    const sandbox = newWorkspace('lock-dead');
    const dying = new pg.Pool({ connectionString: SERVER, max: 2 });
    dying.on('error', () => {});
    try {
      const first = createPostgresUpperStore({ client: dying, sandbox });
      await first.writeState(new Uint8Array([1]));
      // Terminate the backend that holds the lock, as the server does when its client vanished.
      const key = BigInt(sandboxLockKey(sandbox));
      const { rows } = await sharedPool().query(
        `SELECT pg_terminate_backend(pid) AS done FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid::bigint = $1 AND objid::bigint = $2`,
        [Number(BigInt.asUintN(32, key >> 32n)), Number(BigInt.asUintN(32, key))],
      );
      expect(rows).toEqual([{ done: true }]);
      const second = createPostgresUpperStore({ client: sharedPool(), sandbox });
      await second.lock({ timeoutMs: 10_000 });
      await second.writeState(new Uint8Array([2]));
      expect(await codeOf(first.writeState(new Uint8Array([9])))).toBe('FS_IO_ERROR');
      expect(await second.readState()).toEqual(new Uint8Array([2]));
      await second.unlock();
    } finally {
      await dying.end().catch(() => {});
    }
  });

  it('a sandbox started through one connection is reviewed and committed through another (two hosts)', async () => {
    const other = new pg.Pool({ connectionString: SERVER, max: 2 });
    try {
      const workspace = newWorkspace('hosts');
      const sandbox = `${workspace}/sandbox`;
      const lowerA = createPostgresFs({ client: sharedPool(), workspace });
      await lowerA.writeText(await lowerA.resolve('/a.txt'), 'a\n');
      const storeA = createPostgresUpperStore({ client: sharedPool(), sandbox });
      const agent = await createOverlayFs({ lower: lowerA, store: storeA });
      await agent.writeText(await agent.resolve('/a.txt'), 'A\n');
      await agent.writeText(await agent.resolve('/b/new.txt'), 'new\n');
      await storeA.unlock(); // the agent's host is done with it

      const lowerB = createPostgresFs({ client: other, workspace });
      const storeB = createPostgresUpperStore({ client: other, sandbox });
      const review = await createOverlayFs({ lower: lowerB, store: storeB });
      expect((await review.changes()).map((c) => `${c.kind} ${c.path}`)).toEqual(['modified /a.txt', 'added /b/new.txt']);
      const result = await storeB.withLock(() => review.commit());
      expect(result.committed).toHaveLength(2);
      expect((await lowerA.readText(await lowerA.resolve('/b/new.txt'))).text).toBe('new\n');
      expect(await (await createOverlayFs({ lower: lowerA, store: createPostgresUpperStore({ client: sharedPool(), sandbox }) })).changes()).toEqual([]);
    } finally {
      await other.end();
    }
  });
});

describe('PostgreSQL upper store', () => {
  it('appendJournal writes at the offset and drops everything after it, across chunks (model property)', async () => {
    const client = await sharedPglite();
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant('write' as const), bytes: fc.uint8Array({ maxLength: 12 }) }),
            fc.record({ op: fc.constant('append' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.uint8Array({ maxLength: 12 }) }),
          ),
          { maxLength: 12 },
        ),
        async (steps) => {
          const store = createPostgresUpperStore({ client, sandbox: newWorkspace('journal') });
          let model: Uint8Array | undefined;
          for (const s of steps) {
            if (s.op === 'write') {
              await store.writeJournal(s.bytes);
              model = s.bytes;
            } else if (model !== undefined) {
              const offset = Math.floor(s.at * model.byteLength);
              await store.appendJournal(offset, s.bytes);
              model = new Uint8Array([...model.subarray(0, offset), ...s.bytes]);
            }
            const got = await store.readJournal();
            expect(got === undefined ? undefined : [...got]).toEqual(model === undefined ? undefined : [...model]);
          }
          await store.drop();
          await store.unlock();
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a second store in the same process cannot write a sandbox the first holds (FS_CONFLICT); withLock waits, and lets go after', async () => {
    const client = await sharedPglite();
    const sandbox = newWorkspace('same-process');
    const a = createPostgresUpperStore({ client, sandbox });
    const b = createPostgresUpperStore({ client, sandbox });
    await a.writeBlob('a'.repeat(64), new Uint8Array([1]));
    expect(await codeOf(b.writeBlob('b'.repeat(64), new Uint8Array([2])))).toBe('FS_CONFLICT');
    const waiting = b.withLock(async () => {
      await b.writeBlob('b'.repeat(64), new Uint8Array([2]));
      return b.locked;
    }, { timeoutMs: 60_000 });
    await a.unlock();
    expect(await waiting).toBe(true);
    expect(b.locked).toBe(false);
    expect(await a.listBlobs()).toEqual(['a'.repeat(64), 'b'.repeat(64)]);
  });

  it('an overlay that let go of the lock while another process saved the sandbox is refused (FS_CONFLICT), not saved over it', async () => {
    const client = await sharedPglite();
    const sandbox = newWorkspace('stale');
    const lower = createMemoryFs({ files: { '/a': 'a' } });
    const first = createPostgresUpperStore({ client, sandbox });
    const a = await createOverlayFs({ lower, store: first });
    await a.writeText(await a.resolve('/x'), 'x');
    await first.unlock();
    const second = createPostgresUpperStore({ client, sandbox });
    const b = await createOverlayFs({ lower, store: second });
    await b.writeText(await b.resolve('/y'), 'y');
    await second.unlock();
    expect(await codeOf(a.writeText(await a.resolve('/z'), 'z'))).toBe('FS_CONFLICT');
    expect(first.locked).toBe(false);
    // Nothing was lost, and a sandbox opened again works.
    const c = await createOverlayFs({ lower, store: createPostgresUpperStore({ client, sandbox }) });
    expect((await c.changes()).map((ch) => ch.path)).toEqual(['/x', '/y']);
    await c.writeText(await c.resolve('/z'), 'z');
    // Without anyone else in between, letting go and changing again is fine.
    const d = createPostgresUpperStore({ client, sandbox: newWorkspace('alone') });
    const fsD = await createOverlayFs({ lower, store: d });
    await fsD.writeText(await fsD.resolve('/1'), '1');
    await d.unlock();
    await fsD.writeText(await fsD.resolve('/2'), '2');
    await d.unlock();
  });

  it('revision changes with the document and journal, and exists() tells a saved sandbox', async () => {
    const client = await sharedPglite();
    const store = createPostgresUpperStore({ client, sandbox: newWorkspace('revision') });
    expect(await store.revision()).toBe('absent');
    expect(await store.exists()).toBe(false);
    const lower = createMemoryFs({ files: { '/a': 'a' } });
    const fs = await createOverlayFs({ lower, store });
    const r0 = await store.revision();
    await fs.writeText(await fs.resolve('/a'), 'b');
    const r1 = await store.revision();
    expect(r1).not.toBe(r0);
    expect(await store.exists()).toBe(true);
    await store.drop();
    expect(await store.revision()).toBe('absent');
  });

  it('migrates a version-1 database to the current schema, keeping its workspaces, when processes start at once', async () => {
    const db = await PGlite.create();
    try {
      await db.exec(VERSION_1);
      const stores = Array.from({ length: 3 }, (_, i) => createPostgresUpperStore({ client: db, sandbox: `s${i}` }));
      await Promise.all(stores.map((s, i) => s.writeState(new Uint8Array([i]))));
      const { rows } = await db.query<{ value: string }>(`SELECT value FROM dsh_fs_meta WHERE key = 'schema_version'`);
      expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
      const old = createPostgresFs({ client: db, workspace: 'old' });
      // Version 3 gave every file an executable bit, clear for the files already there.
      expect((await old.listDir(await old.resolve('/'))).map((e) => [e.name, e.executable])).toEqual([['run.sh', false]]);
      await old.setExecutable!(await old.resolve('/run.sh'), true);
      expect((await old.stat(await old.resolve('/run.sh')))?.executable).toBe(true);
      expect(await stores[2]!.readState()).toEqual(new Uint8Array([2]));
    } finally {
      await db.close();
    }
  });
});
