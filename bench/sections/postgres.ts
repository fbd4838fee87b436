import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { createPostgresFs, type PgQueryable } from '../../src/backends/postgres/index.js';
import { contentVersion } from '../../src/seam/index.js';
import { glob, grep } from '../../src/search/index.js';
import { interleave, reps, row, type BenchRow } from '../lib.js';
import { markerOf, smallFile, toolHarness } from '../subjects.js';

const SECTION = 'postgres';
const SMALL = 200;
/** Hand-written SQL over the chunked layout (schema version 4): a file's whole content, and a guarded rewrite. */
const CONTENT = `coalesce((SELECT string_agg(c.bytes, ''::bytea ORDER BY c.pos) FROM dsh_fs_chunks c WHERE c.blob = e.blob), ''::bytea)`;
const SET_IF_VERSION = `WITH upd AS (UPDATE dsh_fs_entries SET blob = nextval('dsh_fs_blob_ids'), version = $4, size = $5
    WHERE workspace = $1 AND path = $2 AND version = $6 RETURNING blob)
  INSERT INTO dsh_fs_chunks (blob, pos, bytes) SELECT blob, 0, $3 FROM upd RETURNING 1`;
const SEARCH_FILES = Number(process.env.DSH_FS_BENCH_SEARCH_FILES ?? 20_000);
/** Search pushed into the database: within twice one hand-written query. */
const PUSHDOWN_GOAL = { text: '≤ 2×', maxRatio: 2 };
const WRITERS = 4;
const EDITS_PER_WRITER = 100;

/**
 * The PostgreSQL backend against bare SQL on the same database: the server in DSH_FS_TEST_PG
 * when set (a Pool per writer), else embedded PGlite. Rows in one table: 1 KiB read and edit
 * through the tools vs one SELECT / one SELECT + one UPDATE … WHERE version; glob and grep over
 * 20,000 files vs the same walk by hand with one query; 4 concurrent writers on distinct files
 * and on one hot file.
 */
export async function runPostgresBench(): Promise<BenchRow[]> {
  const server = process.env.DSH_FS_TEST_PG;
  const where = server === undefined ? 'PGlite' : 'PostgreSQL server';
  const pools: pg.Pool[] = [];
  let embedded: PGlite | undefined;
  const client = (): PgQueryable => {
    if (server === undefined) return embedded!;
    const pool = new pg.Pool({ connectionString: server, max: 4 });
    pools.push(pool);
    return pool;
  };
  if (server === undefined) embedded = await PGlite.create();
  try {
    const db = client();
    const workspace = `bench-${process.pid}-${Date.now()}`;
    const fs = createPostgresFs({ client: db, workspace });
    await fs.provider.ready();
    await bulkInsert(db, workspace, Array.from({ length: SMALL }, (_, i) => [`/small/tool/f${i}.ts`, smallFile(i)] as const));
    await bulkInsert(db, workspace, Array.from({ length: SMALL }, (_, i) => [`/small/sql/f${i}.ts`, smallFile(i)] as const));
    const ctx = toolHarness(fs);
    const exec = { owner: 'bench' };
    for (let i = 0; i < SMALL; i++) await ctx.tools.execute('read', { file_path: `/small/tool/f${i}.ts` }, exec);

    const c = (kind: string) => `1 KiB file, ${kind} (${where})`;
    const readT = await interleave(
      {
        tool: async () => {
          for (let i = 0; i < SMALL; i++) {
            const r = await ctx.tools.execute('read', { file_path: `/small/tool/f${i}.ts` }, exec);
            if (r.isError) throw new Error(r.text);
          }
        },
        sql: async () => {
          for (let i = 0; i < SMALL; i++) {
            const { rows } = await db.query(`SELECT ${CONTENT} AS content FROM dsh_fs_entries e WHERE workspace = $1 AND path = $2`, [workspace, `/small/sql/f${i}.ts`]);
            Buffer.from(rows[0].content).toString('utf8');
          }
        },
      },
      { reps: reps(7), warmup: 1, ops: SMALL, scale: 1000 },
    );
    const flips = { tool: 0, sql: 0 };
    const editT = await interleave(
      {
        tool: async () => {
          const args = { old_string: markerOf(flips.tool), new_string: markerOf(flips.tool + 1) };
          for (let i = 0; i < SMALL; i++) {
            const r = await ctx.tools.execute('edit', { file_path: `/small/tool/f${i}.ts`, ...args }, exec);
            if (r.isError) throw new Error(r.text);
          }
          flips.tool++;
        },
        sql: async () => {
          const [from, to] = [markerOf(flips.sql), markerOf(flips.sql + 1)];
          for (let i = 0; i < SMALL; i++) {
            const path = `/small/sql/f${i}.ts`;
            const { rows } = await db.query(`SELECT ${CONTENT} AS content, version FROM dsh_fs_entries e WHERE workspace = $1 AND path = $2`, [workspace, path]);
            const next = Buffer.from(Buffer.from(rows[0].content).toString('utf8').replace(from, to));
            const done = await db.query(
              SET_IF_VERSION,
              [workspace, path, next, contentVersion(next), next.byteLength, rows[0].version],
            );
            if (done.rows.length !== 1) throw new Error('bare edit lost a race');
          }
          flips.sql++;
        },
      },
      { reps: reps(7), warmup: 1, ops: SMALL, scale: 1000 },
    );

    // Search: 20,000 files in 10 × 10 × 10 directories; one in 97 holds the needle.
    const files: (readonly [string, string])[] = [];
    for (let n = 0; n < SEARCH_FILES; n++) {
      const dir = `/tree/d${n % 10}/e${Math.floor(n / 10) % 10}/f${Math.floor(n / 100) % 10}`;
      files.push([`${dir}/file${n}.${['ts', 'md', 'json'][n % 3]}`, `// file ${n}\nexport const value = 1;\n${n % 97 === 0 ? 'const needle = true;' : 'const other = false;'}\n`]);
    }
    await bulkInsert(db, workspace, files);
    const expectTs = files.filter(([p]) => p.endsWith('.ts')).length;
    const searchT = await interleave(
      {
        glob: async () => {
          const r = await glob(fs, '**/*.ts', { cwd: '/tree' });
          if (r.matches.length !== expectTs) throw new Error(`glob found ${r.matches.length}`);
        },
        globSql: async () => {
          const { rows } = await db.query(
            `SELECT path FROM dsh_fs_entries WHERE workspace = $1 AND path >= '/tree/' AND path < '/tree0' AND kind = 'file' ORDER BY path`,
            [workspace],
          );
          const found = rows.filter((r) => r.path.endsWith('.ts')).length;
          if (found !== expectTs) throw new Error(`bare glob found ${found}`);
        },
        grep: async () => {
          const r = await grep(fs, 'needle', { path: '/tree' });
          if (r.matches.length === 0) throw new Error('grep found nothing');
        },
        grepSql: async () => {
          const { rows } = await db.query(
            `SELECT path, ${CONTENT} AS content FROM dsh_fs_entries e WHERE workspace = $1 AND path >= '/tree/' AND path < '/tree0' AND kind = 'file' ORDER BY path`,
            [workspace],
          );
          let hits = 0;
          for (const r of rows) for (const line of Buffer.from(r.content).toString('utf8').split('\n')) if (/needle/.test(line)) hits++;
          if (hits === 0) throw new Error('bare grep found nothing');
        },
      },
      { reps: reps(3), warmup: 1 },
    );

    // Throughput: 4 writers (each with its own filesystem and, on a server, its own pool), unguarded
    // edits: each of its own file (distinct), then all of one file (hot, every edit contends).
    await bulkInsert(db, workspace, Array.from({ length: WRITERS }, (_, i) => [`/hot/f${i}.txt`, 'START\nEND\n'] as const));
    await bulkInsert(db, workspace, Array.from({ length: WRITERS }, (_, i) => [`/hot-sql/f${i}.txt`, 'START\nEND\n'] as const));
    const writers = Array.from({ length: WRITERS }, () => createPostgresFs({ client: client(), workspace }));
    const writerClients = writers.map(() => client());
    let round = 0;
    const throughput = (fileOf: (writer: number) => number) =>
      interleave(
        {
          fs: async () => {
            round++;
            await Promise.all(
              writers.map(async (w, k) => {
                const t = await w.resolve(`/hot/f${fileOf(k)}.txt`);
                // Unguarded: under contention the edit waits for the row lock; it never gives up.
                for (let i = 0; i < EDITS_PER_WRITER; i++) {
                  await w.editText(t, { oldString: '\nEND', newString: `\nr${round}w${k}e${i}\nEND` });
                }
              }),
            );
          },
          sql: async () => {
            round++;
            await Promise.all(
              writerClients.map(async (q, k) => {
                const path = `/hot-sql/f${fileOf(k)}.txt`;
                for (let i = 0; i < EDITS_PER_WRITER; i++) {
                  for (;;) {
                    const { rows } = await q.query(`SELECT ${CONTENT} AS content, version FROM dsh_fs_entries e WHERE workspace = $1 AND path = $2`, [workspace, path]);
                    const next = Buffer.from(Buffer.from(rows[0].content).toString('utf8').replace('\nEND', `\nr${round}w${k}e${i}\nEND`));
                    const done = await q.query(
                      SET_IF_VERSION,
                      [workspace, path, next, contentVersion(next), next.byteLength, rows[0].version],
                    );
                    if (done.rows.length === 1) break;
                  }
                }
              }),
            );
          },
        },
        { reps: reps(3), warmup: 1, ops: WRITERS * EDITS_PER_WRITER, scale: 1000 },
      );
    const distinctT = await throughput((k) => k);
    // Each round appends to the files: start the hot case from small files again.
    await db.query(`WITH upd AS (UPDATE dsh_fs_entries SET blob = nextval('dsh_fs_blob_ids'), version = $3, size = $4 WHERE workspace = $1 AND path LIKE '/hot%/f%.txt' RETURNING blob)
       INSERT INTO dsh_fs_chunks (blob, pos, bytes) SELECT blob, 0, $2 FROM upd`, [
      workspace,
      Buffer.from('START\nEND\n'),
      contentVersion(Buffer.from('START\nEND\n')),
      10,
    ]);
    const hotT = await throughput(() => 0);
    await db.query('DELETE FROM dsh_fs_entries WHERE workspace = $1', [workspace]);

    const n = `${SEARCH_FILES.toLocaleString('en')} files`;
    return [
      row({ section: SECTION, case: c('read'), subject: 'read tool (postgres, policy, render)', unit: 'µs/op' }, readT.tool, { name: 'one SELECT', timing: readT.sql }),
      row({ section: SECTION, case: c('edit'), subject: 'edit tool (postgres, policy, render)', unit: 'µs/op' }, editT.tool, {
        name: 'SELECT + UPDATE … WHERE version',
        timing: editT.sql,
      }),
      row({ section: SECTION, case: `glob **/*.ts, ${n} (${where})`, subject: 'glob (postgres)', unit: 'ms' }, searchT.glob, { name: 'one range SELECT of paths', timing: searchT.globSql }, PUSHDOWN_GOAL),
      row({ section: SECTION, case: `grep needle, ${n} (${where})`, subject: 'grep (postgres)', unit: 'ms' }, searchT.grep, {
        name: 'one range SELECT of contents + JS regex',
        timing: searchT.grepSql,
      }, PUSHDOWN_GOAL),
      row(
        { section: SECTION, case: `${WRITERS} concurrent writers, unguarded edits, each of its own file (${where})`, subject: 'editText, per edit', unit: 'µs/op' },
        distinctT.fs,
        { name: 'bare SELECT + UPDATE … WHERE version, retried', timing: distinctT.sql },
      ),
      row(
        { section: SECTION, case: `${WRITERS} concurrent writers, unguarded edits, all of one hot file (${where})`, subject: 'editText, per edit', unit: 'µs/op' },
        hotT.fs,
        { name: 'bare SELECT + UPDATE … WHERE version, retried', timing: hotT.sql },
      ),
    ];
  } finally {
    for (const p of pools) await p.end();
    await embedded?.close();
  }
}

/** Files (with their parent directories) straight into the table, in batches. */
async function bulkInsert(db: PgQueryable, workspace: string, files: readonly (readonly [string, string])[]): Promise<void> {
  const dirs = new Set<string>();
  for (const [path] of files) for (let p = path.slice(0, path.lastIndexOf('/')); p !== ''; p = p.slice(0, p.lastIndexOf('/'))) dirs.add(p);
  const sorted = [...dirs].sort((a, b) => a.split('/').length - b.split('/').length);
  const parent = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/';
  await db.query(
    `INSERT INTO dsh_fs_entries (workspace, path, parent, kind) SELECT $1, p, q, 'directory' FROM unnest($2::text[], $3::text[]) AS t(p, q)
     ON CONFLICT (workspace, path) DO NOTHING`,
    [workspace, sorted, sorted.map(parent)],
  );
  for (let i = 0; i < files.length; i += 2000) {
    const batch = files.slice(i, i + 2000);
    const bytes = batch.map(([, text]) => Buffer.from(text));
    await db.query(
      `WITH t AS (SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::int[]) AS t(p, q, c, v, s)),
       ins AS (INSERT INTO dsh_fs_entries (workspace, path, parent, kind, blob, version, size)
         SELECT $1, p, q, 'file', nextval('dsh_fs_blob_ids'), v, s FROM t RETURNING path, blob)
       INSERT INTO dsh_fs_chunks (blob, pos, bytes) SELECT ins.blob, 0, decode(t.c, 'base64') FROM ins JOIN t ON t.p = ins.path WHERE t.s > 0`,
      [workspace, batch.map(([p]) => p), batch.map(([p]) => parent(p)), bytes.map((b) => b.toString('base64')), bytes.map((b) => contentVersion(b)), bytes.map((b) => b.byteLength)],
    );
  }
  // As autovacuum would soon after a bulk load: the planner's statistics, which change its plans
  // (grep's candidate query took 4× as long after one, before it was rewritten).
  await db.query('ANALYZE dsh_fs_entries, dsh_fs_chunks');
}
