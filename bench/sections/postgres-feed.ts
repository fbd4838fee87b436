import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPostgresFs } from '../../src/backends/postgres/index.js';
import type { FsChangeEvent, FsWatch } from '../../src/seam/index.js';
import { row, summarise, type BenchRow } from '../lib.js';

const SECTION = 'postgres-feed';
const CHANGES = Number(process.env.DSH_FS_BENCH_FEED_CHANGES ?? 300);
const WARMUP = 20;
const WRITER = fileURLToPath(new URL('../feed-writer.mjs', import.meta.url));
/** A change that never arrives fails the run instead of hanging it. */
const TIMEOUT_MS = 10_000;

/**
 * PostgreSQL change-feed latency between two processes (needs the server in DSH_FS_TEST_PG; two
 * processes cannot share PGlite): another process changes a file by SQL, one change at a time;
 * this one watches. Latency is from the writer starting its statement to this process having the
 * event (both read the same wall clock), so it includes the write itself, given as the baseline.
 */
export async function runPostgresFeedBench(): Promise<BenchRow[]> {
  const server = process.env.DSH_FS_TEST_PG;
  if (server === undefined) return [];
  const pool = new pg.Pool({ connectionString: server, max: 2 });
  const workspace = `bench-feed-${process.pid}-${Date.now()}`;
  const fs = createPostgresFs({ client: pool, workspace });
  const path = '/feed/f.txt';
  await fs.writeText(await fs.resolve(path), 'start\n');
  const watch = fs.watch!({ paths: [path] });
  await watch.ready;
  const child = spawn(process.execPath, [WRITER, server, workspace, path], { stdio: ['pipe', 'pipe', 'inherit'] });
  const acks = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const latencies: number[] = [];
  const writes: number[] = [];
  try {
    for (let i = 0; i < WARMUP + CHANGES; i++) {
      child.stdin.write(`go ${i}\n`);
      const [event, ack] = await Promise.all([nextEvent(watch), acks.next()]);
      // The system's monotonic clock, which the writer reads too: wall-clock origins of two processes
      // drift apart when the clock is stepped (a run measured every latency as −4.5 s).
      const at = Number(process.hrtime.bigint()) / 1e6;
      if (ack.done) throw new Error('the writer process ended early');
      const { version, started, writeMs } = JSON.parse(ack.value) as { version: string; started: number; writeMs: number };
      if (event.version !== version) throw new Error(`expected the event of change ${i}, got ${JSON.stringify(event)}`);
      if (i < WARMUP) continue;
      latencies.push(at - started);
      writes.push(writeMs);
    }
  } finally {
    child.stdin.end();
    await watch.return();
    await pool.query('DELETE FROM dsh_fs_entries WHERE workspace = $1', [workspace]).catch(() => {});
    await pool.end();
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
  const fields = { section: SECTION, case: `another process's write to the event, ${CHANGES} changes (PostgreSQL server)`, unit: 'ms' as const };
  const write = { name: 'the write alone (median)', timing: summarise(writes) };
  return [
    row({ ...fields, subject: 'change feed latency, median' }, summarise(latencies), write, { text: 'delivered ≤ 1 s after the write', maxDelta: 1000 }),
    row({ ...fields, subject: 'change feed latency, p99' }, p99, write, { text: 'delivered ≤ 1 s after the write', maxDelta: 1000 }),
  ];
}

async function nextEvent(watch: FsWatch): Promise<FsChangeEvent> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const r = await Promise.race([
      watch.next(),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no change event within 10 s')), TIMEOUT_MS))),
    ]);
    if (r.done) throw new Error('the watch ended');
    return r.value;
  } finally {
    clearTimeout(timer);
  }
}
