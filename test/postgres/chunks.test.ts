import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { contentVersion } from '../../src/index.js';
import type { FsProviderReadStream } from '../../src/seam/index.js';
import { createPostgresFs, type PgQueryable, type PostgresFileSystem } from '../../src/backends/postgres/index.js';
import { CHUNK_BYTES, SCHEMA_VERSION } from '../../src/backends/postgres/schema.js';
import { codeOf } from '../support/code-of.js';
import { SERVER, closeShared, newWorkspace, sharedPglite, sharedPool } from './helpers.js';

const MiB = CHUNK_BYTES;

/** A client that records the offsets of the chunks each statement on the chunks table returned. */
function chunkReads(client: PgQueryable) {
  const fetched: number[][] = [];
  return {
    fetched,
    client: {
      async query(text: string, values?: unknown[]) {
        const result = await client.query(text, values);
        if (/^SELECT pos::float8 AS pos, bytes FROM dsh_fs_chunks/.test(text.trim())) fetched.push(result.rows.map((r) => Number(r.pos)));
        return result;
      },
    } satisfies PgQueryable,
  };
}

async function gather(stream: FsProviderReadStream): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of stream.chunks) parts.push(c);
  return Buffer.concat(parts);
}

async function* pieces(bytes: Uint8Array, sizes: readonly number[]): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (let i = 0; at < bytes.byteLength; i++) {
    const n = sizes[i % sizes.length]!;
    yield bytes.subarray(at, at + n);
    at += n;
  }
}

/** Chunks that no row names: none may be left behind by any write, removal or failure. */
async function orphans(client: PgQueryable): Promise<number> {
  const { rows } = await client.query(`SELECT count(*)::int AS n FROM dsh_fs_chunks c WHERE NOT EXISTS (SELECT 1 FROM dsh_fs_entries e WHERE e.blob = c.blob)`);
  return rows[0].n;
}

async function chunksOf(client: PgQueryable, workspace: string, path: string): Promise<number[]> {
  const { rows } = await client.query(
    `SELECT c.pos::float8 AS pos FROM dsh_fs_chunks c JOIN dsh_fs_entries e ON c.blob = e.blob WHERE e.workspace = $1 AND e.path = $2 ORDER BY c.pos`,
    [workspace, path],
  );
  return rows.map((r) => Number(r.pos));
}

const SUBJECTS: [string, () => Promise<PgQueryable> | PgQueryable][] = [
  ['PGlite', sharedPglite],
  ...(SERVER === undefined ? [] : ([['server', sharedPool]] as [string, () => PgQueryable][])),
];

afterAll(closeShared);

describe.each(SUBJECTS)('file content in chunks over %s', (_label, getClient) => {
  // 3.5 chunks: three full ones and a half.
  const big = randomBytes(3 * MiB + MiB / 2);

  it('stores a file of several chunks as 1 MiB rows, and reads any range from only the chunks it needs', async () => {
    const base = await getClient();
    const workspace = newWorkspace('chunks');
    const { client, fetched } = chunkReads(base);
    const fs: PostgresFileSystem = createPostgresFs({ client, workspace });
    const p = fs.provider;
    const t = await fs.resolve('/big.bin');
    expect(await p.swap(t, { expect: { kind: 'absent' }, bytes: big })).toMatchObject({ ok: true, version: contentVersion(big) });
    expect(await chunksOf(base, workspace, '/big.bin')).toEqual([0, MiB, 2 * MiB, 3 * MiB]);
    expect(Buffer.from((await p.read(t, { maxBytes: Infinity })).bytes).equals(big)).toBe(true);

    // From the middle of the third chunk to the end: the third and fourth chunks, one statement each.
    fetched.length = 0;
    const s = await p.openRead!(t, { maxBytes: 0, start: 2 * MiB + 123 });
    expect(s.size).toBe(big.byteLength);
    expect(s.version).toBe(contentVersion(big));
    expect((await gather(s)).equals(big.subarray(2 * MiB + 123))).toBe(true);
    expect(fetched).toEqual([[2 * MiB], [3 * MiB]]);

    // A reader that stops after the first piece has fetched that one chunk only.
    fetched.length = 0;
    const early = await p.openRead!(t, { maxBytes: 0, start: MiB + 5 });
    for await (const c of early.chunks) {
      expect(Buffer.from(c).equals(big.subarray(MiB + 5, 2 * MiB))).toBe(true);
      break;
    }
    expect(fetched).toEqual([[MiB]]);

    // At or past the end: no chunks, no statement.
    fetched.length = 0;
    expect((await gather(await p.openRead!(t, { maxBytes: 0, start: big.byteLength }))).byteLength).toBe(0);
    expect((await gather(await p.openRead!(t, { maxBytes: 0, start: big.byteLength + 10 }))).byteLength).toBe(0);
    expect(fetched).toEqual([]);
  });

  it('any start gives exactly the bytes from there (property)', async () => {
    const client = await getClient();
    const fs = createPostgresFs({ client, workspace: newWorkspace('ranges') });
    const t = await fs.resolve('/big.bin');
    await fs.provider.swap(t, { expect: { kind: 'any' }, bytes: big });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: big.byteLength }), async (start) => {
        const got = await gather(await fs.provider.openRead!(t, { maxBytes: 0, start }));
        expect(got.equals(big.subarray(start))).toBe(true);
      }),
      { numRuns: 12 },
    );
  });

  it('swapFrom stores a stream of any piece sizes as the same chunks and version as swap, and leaves nothing behind', async () => {
    const client = await getClient();
    const workspace = newWorkspace('swapfrom');
    const fs = createPostgresFs({ client, workspace, maxFileBytes: 8 * MiB });
    const p = fs.provider;
    const t = await fs.resolve('/d/streamed.bin');
    const r = await p.swapFrom!(t, { expect: { kind: 'absent' }, source: pieces(big, [1, 777_777, 2 * MiB + 3, 100]) });
    expect(r).toEqual({ ok: true, existed: false, version: contentVersion(big) });
    expect(await chunksOf(client, workspace, '/d/streamed.bin')).toEqual([0, MiB, 2 * MiB, 3 * MiB]);
    expect(Buffer.from((await p.read(t, { maxBytes: Infinity })).bytes).equals(big)).toBe(true);
    expect((await fs.stat(t))?.size).toBe(big.byteLength);

    // A broken expectation: nothing of the source is read, nothing changes.
    let pulled = 0;
    const counted = async function* () {
      pulled++;
      yield new Uint8Array(3);
    };
    const stale = await p.swapFrom!(t, { expect: { kind: 'absent' }, source: counted() });
    expect(stale).toEqual({ ok: false, current: { kind: 'present', version: contentVersion(big) } });
    expect(pulled).toBe(0);

    // Replaced (over a version), emptied, then a failing source and one over the limit: nothing published.
    const small = new Uint8Array([1, 2, 3]);
    expect(await p.swapFrom!(t, { expect: { kind: 'present', version: contentVersion(big) }, source: pieces(small, [2]) })).toMatchObject({ ok: true, existed: true });
    expect(await chunksOf(client, workspace, '/d/streamed.bin')).toEqual([0]);
    const failing = async function* () {
      yield big.subarray(0, 2 * MiB);
      throw new Error('source broke');
    };
    await expect(p.swapFrom!(t, { expect: { kind: 'any' }, source: failing() })).rejects.toThrow('source broke');
    expect(await codeOf(p.swapFrom!(t, { expect: { kind: 'any' }, source: pieces(randomBytes(9 * MiB), [MiB]) }))).toBe('FS_TOO_LARGE');
    expect(Buffer.from((await p.read(t, { maxBytes: Infinity })).bytes)).toEqual(Buffer.from(small));
    expect(await p.swapFrom!(t, { expect: { kind: 'any' }, source: pieces(new Uint8Array(0), [1]) })).toMatchObject({ ok: true, version: contentVersion(new Uint8Array(0)) });
    expect(await chunksOf(client, workspace, '/d/streamed.bin')).toEqual([]);
    expect((await p.read(t, { maxBytes: Infinity })).bytes.byteLength).toBe(0);
    expect(await orphans(client)).toBe(0);
  });

  it('a file rewritten while it is streamed fails the stream with FS_CONFLICT, never mixing two contents', async () => {
    const client = await getClient();
    const fs = createPostgresFs({ client, workspace: newWorkspace('torn') });
    const t = await fs.resolve('/big.bin');
    await fs.provider.swap(t, { expect: { kind: 'any' }, bytes: big });
    const s = await fs.provider.openRead!(t, { maxBytes: 0 });
    const it = s.chunks[Symbol.asyncIterator]();
    expect(Buffer.from((await it.next()).value as Uint8Array).equals(big.subarray(0, MiB))).toBe(true);
    await fs.provider.swap(t, { expect: { kind: 'any' }, bytes: randomBytes(big.byteLength) });
    expect(await codeOf(it.next())).toBe('FS_CONFLICT');
  });

  it('drops the chunks of every content no row names: overwrite, removal, rename over a file, recursive rmdir, batch', async () => {
    const client = await getClient();
    const two = big.subarray(0, MiB + 10); // two chunks
    const fs = createPostgresFs({ client, workspace: newWorkspace('drop') });
    const at = (p: string) => fs.resolve(p);
    await fs.writeBytes(await at('/a/one.bin'), two);
    await fs.writeBytes(await at('/a/one.bin'), two.subarray(0, MiB + 1));
    await fs.writeBytes(await at('/a/two.bin'), two);
    await fs.writeBytes(await at('/a/three.bin'), two);
    await fs.rename(await at('/a/two.bin'), await at('/a/three.bin'), { replace: true });
    const bytesAt = async (p: string) => Buffer.from((await fs.provider.read(await at(p), { maxBytes: Infinity })).bytes);
    expect((await bytesAt('/a/three.bin')).equals(two)).toBe(true);
    await fs.remove(await at('/a/one.bin'));
    await fs.writeBytes(await at('/b/four.bin'), two);
    await fs.writeBytes(await at('/b/five.bin'), two);
    const batch = await fs.provider.applyBatch!(
      [
        { target: await at('/b/four.bin'), expect: { kind: 'present', version: contentVersion(two) }, bytes: two.subarray(MiB) },
        { target: await at('/b/five.bin'), expect: { kind: 'present', version: contentVersion(two) }, bytes: null },
      ],
      {},
    );
    expect(batch.ok).toBe(true);
    await fs.rmdir(await at('/a'), { recursive: true });
    expect(await orphans(client)).toBe(0);
    expect((await bytesAt('/b/four.bin')).equals(two.subarray(MiB))).toBe(true);
  });
});

/** Schema version 3 exactly as the code of that version created it, with files written its way (one `content` value). */
const VERSION_3 = `CREATE TABLE dsh_fs_meta (key text PRIMARY KEY, value text NOT NULL);
  INSERT INTO dsh_fs_meta VALUES ('schema_version', '3');
  CREATE TABLE dsh_fs_entries (
    workspace text NOT NULL, path text COLLATE "C" NOT NULL, parent text COLLATE "C",
    parent_kind text NOT NULL DEFAULT 'directory' CHECK (parent_kind = 'directory'),
    kind text NOT NULL CHECK (kind IN ('file', 'directory', 'symlink')),
    content bytea, link text, version text, size integer, mtime timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace, path), UNIQUE (workspace, path, kind),
    FOREIGN KEY (workspace, parent, parent_kind) REFERENCES dsh_fs_entries (workspace, path, kind),
    CHECK ((parent IS NULL) = (path = '/')),
    CHECK ((kind = 'file') = (content IS NOT NULL AND version IS NOT NULL AND size IS NOT NULL)),
    CHECK ((kind = 'symlink') = (link IS NOT NULL)));
  CREATE INDEX dsh_fs_entries_parent ON dsh_fs_entries (workspace, parent, path);
  CREATE TABLE dsh_fs_sandboxes (sandbox text PRIMARY KEY, state bytea, revision bigint NOT NULL DEFAULT 0, created timestamptz NOT NULL DEFAULT now());
  CREATE TABLE dsh_fs_sandbox_journal (sandbox text NOT NULL REFERENCES dsh_fs_sandboxes (sandbox) ON DELETE CASCADE,
    pos bigint NOT NULL CHECK (pos >= 0), bytes bytea NOT NULL, PRIMARY KEY (sandbox, pos));
  CREATE TABLE dsh_fs_sandbox_blobs (sandbox text NOT NULL REFERENCES dsh_fs_sandboxes (sandbox) ON DELETE CASCADE,
    id text NOT NULL, bytes bytea NOT NULL, PRIMARY KEY (sandbox, id));
  ALTER TABLE dsh_fs_entries ADD COLUMN executable boolean NOT NULL DEFAULT false;
  INSERT INTO dsh_fs_entries (workspace, path, parent, kind) VALUES ('old', '/', NULL, 'directory'), ('old', '/d', '/', 'directory');
  INSERT INTO dsh_fs_entries (workspace, path, parent, kind, link) VALUES ('old', '/d/link', '/d', 'symlink', 'big.bin');`;

describe('migration of a version-3 workspace (one content value per file) to chunks', () => {
  it('converts every file on open: same bytes, versions, sizes, bits; range reads and writes work; the old column is gone', async () => {
    const db = await PGlite.create();
    try {
      await db.exec(VERSION_3);
      const files: [string, Uint8Array, boolean][] = [
        ['/d/big.bin', randomBytes(2 * MiB + 17), false],
        ['/d/exact.bin', randomBytes(MiB), true],
        ['/empty', new Uint8Array(0), false],
        ['/d/small.txt', Buffer.from('hello\n'), false],
      ];
      for (const [path, bytes, executable] of files) {
        await db.query(`INSERT INTO dsh_fs_entries (workspace, path, parent, kind, content, version, size, executable) VALUES ('old', $1, $2, 'file', $3, $4, $5, $6)`, [
          path,
          path.slice(0, path.lastIndexOf('/')) || '/',
          Buffer.from(bytes),
          contentVersion(bytes),
          bytes.byteLength,
          executable,
        ]);
      }
      // Two processes open it at once: one migrates, the other finds it done.
      const [fs, other] = [createPostgresFs({ client: db, workspace: 'old' }), createPostgresFs({ client: db, workspace: 'old' })];
      await Promise.all([fs.provider.ready(), other.provider.ready()]);
      expect((await db.query<{ value: string }>(`SELECT value FROM dsh_fs_meta WHERE key = 'schema_version'`)).rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
      const columns = (await db.query<{ name: string }>(`SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'dsh_fs_entries'`)).rows.map((r) => r.name);
      expect(columns).toContain('blob');
      expect(columns).not.toContain('content');
      for (const [path, bytes, executable] of files) {
        const t = await fs.resolve(path);
        const got = await fs.provider.read(t, { maxBytes: Infinity });
        expect(Buffer.from(got.bytes).equals(Buffer.from(bytes))).toBe(true);
        expect(got.version).toBe(contentVersion(bytes));
        expect(await fs.stat(t)).toMatchObject({ size: bytes.byteLength, version: contentVersion(bytes), executable });
        expect(await chunksOf(db, 'old', path)).toEqual(Array.from({ length: Math.ceil(bytes.byteLength / MiB) }, (_, i) => i * MiB));
      }
      const [, big] = files[0]!;
      const viaLink = await fs.provider.openRead!(await fs.resolve('/d/link'), { maxBytes: 0, start: MiB + 3 });
      expect((await gather(viaLink)).equals(Buffer.from(big.subarray(MiB + 3)))).toBe(true);
      await fs.writeText(await fs.resolve('/d/small.txt'), 'bye\n', { kind: 'replaceIfVersion', version: contentVersion(Buffer.from('hello\n')) });
      expect((await other.readText(await other.resolve('/d/small.txt'))).text).toBe('bye\n');
      // A row without content is refused by the new check, as a file without content was by the old.
      await expect(db.query(`INSERT INTO dsh_fs_entries (workspace, path, parent, kind, version, size) VALUES ('old', '/x', '/', 'file', 'v', 0)`)).rejects.toThrow(/check constraint/);
      await fs.rmdir(await fs.resolve('/d'), { recursive: true });
      expect(await orphans(db)).toBe(0);
    } finally {
      await db.close();
    }
  });
});
