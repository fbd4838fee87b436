import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'vitest';
import { checkRows, formatTable, machine, type BenchRow } from './lib.js';
import { runHistoryBench } from './sections/history.js';
import { runLargeFileBench } from './sections/large-files.js';
import { runHugeFileBench } from './sections/huge-files.js';
import { runMountBench } from './sections/mount.js';
import { runOverlayBench } from './sections/overlay.js';
import { runPatchBench } from './sections/patch.js';
import { runPostgresBench } from './sections/postgres.js';
import { runPostgresFeedBench } from './sections/postgres-feed.js';
import { runRunBench } from './sections/run.js';
import { runScaleBench } from './sections/scale.js';
import { runSqliteBench } from './sections/sqlite.js';
import { runToolStackBench } from './sections/tool-stack.js';
import { runVersionsBench } from './sections/versions.js';

const SEARCH_FILES = 20_000;

type Section = { readonly name: string; readonly run: () => Promise<readonly BenchRow[]> };

const SECTIONS: readonly Section[] = [
  { name: 'large-files', run: runLargeFileBench },
  { name: 'huge-files', run: runHugeFileBench },
  { name: 'tool-stack', run: runToolStackBench },
  { name: 'patch', run: runPatchBench },
  { name: 'overlay', run: runOverlayBench },
  { name: 'history', run: runHistoryBench },
  { name: 'versions', run: runVersionsBench },
  { name: 'scale', run: runScaleBench },
  { name: 'search', run: runSearchRows },
  { name: 'postgres', run: runPostgresBench },
  { name: 'postgres-feed', run: runPostgresFeedBench },
  { name: 'sqlite', run: runSqliteBench },
  { name: 'mount', run: runMountBench },
  { name: 'run', run: runRunBench },
];

/** The search benchmark lives in its own file, owned with the search feature; included when present. */
async function runSearchRows(): Promise<readonly BenchRow[]> {
  const file = new URL('./search.bench.ts', import.meta.url);
  if (!existsSync(file)) return [];
  // Its own default is 100,000 files, which alone can take minutes here; the suite keeps to its budget.
  process.env.DSH_FS_BENCH_SEARCH_FILES ??= String(SEARCH_FILES);
  const mod = (await import(/* @vite-ignore */ fileURLToPath(file))) as { runSearchBench?: () => Promise<unknown> };
  if (typeof mod.runSearchBench !== 'function') throw new TypeError('bench/search.bench.ts does not export runSearchBench()');
  return checkRows('runSearchBench', await mod.runSearchBench());
}

// Experiment switch: memfs asks process.getuid/getgid on every path walk, a syscall each.
if (process.env.BENCH_CACHE_UID) {
  const [uid, gid] = [process.getuid?.() ?? 0, process.getgid?.() ?? 0];
  process.getuid = () => uid;
  process.getgid = () => gid;
}

/**
 * Between sections: what an earlier section wrote is flushed to disk and its garbage collected,
 * so that the kernel's writeback of gigabytes (huge-files) or a full heap does not run during
 * the next section's microseconds.
 */
function settle(): void {
  spawnSync('sync', { stdio: 'ignore' });
  (globalThis as { gc?: () => void }).gc?.();
}

test('benchmarks', async () => {
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
  const started = Date.now();
  const env = machine();
  const rows: BenchRow[] = [];
  const skipped: string[] = [];
  for (const section of SECTIONS) {
    if (only && !only.includes(section.name)) continue;
    settle();
    const t0 = performance.now();
    process.stdout.write(`bench: ${section.name} … `);
    const got = await section.run();
    if (got.length === 0) skipped.push(section.name);
    rows.push(...got);
    process.stdout.write(`${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  }
  const durationMs = Date.now() - started;
  const out = new URL('./results.json', import.meta.url);
  const report = {
    machine: env,
    loadavgAtEnd: machine().loadavg,
    experiments: { cacheUid: Boolean(process.env.BENCH_CACHE_UID), fromSource: process.env.BENCH_FROM_SOURCE === '1' },
    startedAt: new Date(started).toISOString(),
    durationMs,
    skipped,
    rows,
  };
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\n${formatTable(rows)}\n\n`);
  if (skipped.length > 0) process.stdout.write(`sections with no rows: ${skipped.join(', ')}\n`);
  process.stdout.write(`total ${(durationMs / 1000).toFixed(1)} s; results in ${fileURLToPath(out)}\n`);
});
