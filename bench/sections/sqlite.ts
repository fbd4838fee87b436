import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { createPostgresFs, type PgQueryable } from '../../src/backends/postgres/index.js';
import { createSqliteFs } from '../../src/backends/sqlite/index.js';
import type { FileSystem } from '../../src/seam/index.js';
import { glob } from '../../src/search/index.js';
import { interleave, reps, row, summarise, tempDir, type BenchRow, type Timing } from '../lib.js';
import { markerOf, smallFile, toolHarness } from '../subjects.js';

const SECTION = 'sqlite';
const SMALL = 200;
const GLOB_FILES = Number(process.env.DSH_FS_BENCH_SQLITE_FILES ?? 5_000);
const COMMIT_FILES = 1_000;

type Backend = 'sqlite' | 'postgres' | 'local';
const BACKENDS: readonly Backend[] = ['sqlite', 'postgres', 'local'];

/**
 * The SQLite backend against PostgreSQL (the server in DSH_FS_TEST_PG when set, else embedded
 * PGlite) and a local directory, the same workloads on each: 1 KiB read and edit through the
 * tools, glob over a tree, and a sandbox (overlay, upper in memory) committing 1,000 changed files.
 */
export async function runSqliteBench(): Promise<BenchRow[]> {
  const server = process.env.DSH_FS_TEST_PG;
  const pgWhere = server === undefined ? 'PGlite' : 'PostgreSQL server';
  const { dir, cleanup } = await tempDir('sqlite');
  const pool = server === undefined ? undefined : new pg.Pool({ connectionString: server, max: 4 });
  const embedded = server === undefined ? await PGlite.create() : undefined;
  const client: PgQueryable = (pool ?? embedded)!;
  const workspace = `bench-${process.pid}-${Date.now()}`;
  const sqlite = createSqliteFs({ path: join(dir, 'bench.db'), workspace: 'bench' });
  try {
    await mkdir(join(dir, 'local'));
    const local = createLocalFs({ root: join(dir, 'local') });
    const postgres = createPostgresFs({ client, workspace });
    const fss: Record<Backend, FileSystem> = { sqlite, postgres, local };
    const at = (b: Backend, path: string) => (b === 'local' ? join(dir, 'local', path) : path);

    const reads = await toolCases(fss, at);
    const globT = await globCase(fss, at);
    const commitT = await commitCase(fss, at);

    const vs = (b: Backend) => (b === 'postgres' ? `postgres, ${pgWhere}` : b);
    const rows: BenchRow[] = [];
    const add = (kind: string, unit: BenchRow['unit'], t: Record<Backend, Timing>) => {
      for (const b of ['postgres', 'local'] as const) {
        rows.push(row({ section: SECTION, case: kind, subject: `sqlite vs ${vs(b)}`, unit }, t.sqlite, { name: vs(b), timing: t[b] }));
      }
    };
    add(`read tool, 1 KiB file`, 'µs/op', reads.read);
    add(`edit tool, 1 KiB file`, 'µs/op', reads.edit);
    add(`glob **/*.ts, ${GLOB_FILES.toLocaleString('en')} files`, 'ms', globT);
    add(`overlay commit, ${COMMIT_FILES.toLocaleString('en')} changed ~1 KiB files`, 'ms', commitT);
    return rows;
  } finally {
    await sqlite.close();
    await pool?.end();
    await embedded?.close();
    await cleanup();
  }
}

async function seed(fs: FileSystem, path: string, text: string): Promise<void> {
  await fs.writeText(await fs.resolve(path), text);
}

/** The read and edit tools on SMALL files of each backend. */
async function toolCases(fss: Record<Backend, FileSystem>, at: (b: Backend, p: string) => string) {
  const exec = { owner: 'bench' };
  const ctxs = Object.fromEntries(BACKENDS.map((b) => [b, toolHarness(fss[b])])) as Record<Backend, ReturnType<typeof toolHarness>>;
  for (const b of BACKENDS) {
    for (let i = 0; i < SMALL; i++) await seed(fss[b], at(b, `/small/f${i}.ts`), smallFile(i));
    for (let i = 0; i < SMALL; i++) await ctxs[b].tools.execute('read', { file_path: at(b, `/small/f${i}.ts`) }, exec);
  }
  const run = (b: Backend, tool: 'read' | 'edit', args: () => object) => async () => {
    for (let i = 0; i < SMALL; i++) {
      const r = await ctxs[b].tools.execute(tool, { file_path: at(b, `/small/f${i}.ts`), ...args() }, exec);
      if (r.isError) throw new Error(`${b} ${tool}: ${r.text}`);
    }
  };
  const each = (tool: 'read' | 'edit', args: (b: Backend) => () => object, after?: (b: Backend) => void) =>
    Object.fromEntries(
      BACKENDS.map((b) => [
        b,
        async () => {
          await run(b, tool, args(b))();
          after?.(b);
        },
      ]),
    ) as Record<Backend, () => Promise<void>>;
  const opts = { reps: reps(5), warmup: 1, ops: SMALL, scale: 1000 };
  const read = await interleave(each('read', () => () => ({})), opts);
  const flips: Record<Backend, number> = { sqlite: 0, postgres: 0, local: 0 };
  const edit = await interleave(
    each('edit', (b) => () => ({ old_string: markerOf(flips[b]), new_string: markerOf(flips[b] + 1) }), (b) => void flips[b]++),
    opts,
  );
  return { read, edit };
}

/** glob over GLOB_FILES files in 10 × 10 directories. */
async function globCase(fss: Record<Backend, FileSystem>, at: (b: Backend, p: string) => string): Promise<Record<Backend, Timing>> {
  const expected = Math.ceil(GLOB_FILES / 2);
  for (const b of BACKENDS) {
    for (let n = 0; n < GLOB_FILES; n++) await seed(fss[b], at(b, `/tree/d${n % 10}/e${Math.floor(n / 10) % 10}/file${n}.${n % 2 === 0 ? 'ts' : 'md'}`), `// ${n}\n`);
  }
  const variants = Object.fromEntries(
    BACKENDS.map((b) => [
      b,
      async () => {
        const r = await glob(fss[b], '**/*.ts', { cwd: at(b, '/tree') });
        if (r.matches.length !== expected) throw new Error(`${b}: glob found ${r.matches.length}`);
      },
    ]),
  ) as Record<Backend, () => Promise<void>>;
  return interleave(variants, { reps: reps(3), warmup: 1 });
}

/** A sandbox over each backend changes COMMIT_FILES files (untimed), then commits them (timed). */
async function commitCase(fss: Record<Backend, FileSystem>, at: (b: Backend, p: string) => string): Promise<Record<Backend, Timing>> {
  const times: Record<Backend, number[]> = { sqlite: [], postgres: [], local: [] };
  for (const b of BACKENDS) for (let i = 0; i < COMMIT_FILES; i++) await seed(fss[b], at(b, `/commit/f${i}.txt`), smallFile(i));
  const rounds = reps(3);
  for (let round = 0; round < rounds; round++) {
    for (const b of BACKENDS) {
      const sandbox = await createOverlayFs({ lower: fss[b] });
      for (let i = 0; i < COMMIT_FILES; i++) await seed(sandbox, at(b, `/commit/f${i}.txt`), `${smallFile(i)}// round ${round}\n`);
      const t0 = performance.now();
      const result = await sandbox.commit();
      times[b].push(performance.now() - t0);
      if (result.committed.length !== COMMIT_FILES) throw new Error(`${b}: committed ${result.committed.length}`);
    }
  }
  return { sqlite: summarise(times.sqlite), postgres: summarise(times.postgres), local: summarise(times.local) };
}
