import { execFile, spawnSync } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join, posix } from 'node:path';
import fg from 'fast-glob';
import { createLocalFs } from '../src/backends/local/index.js';
import { createMemoryFs } from '../src/backends/memory/index.js';
import { glob, grep, type FileSystem } from '../src/index.js';
import { interleave, reps, row, tempDir, type BenchRow, type Timing } from './lib.js';

/**
 * Search on the seam against its baselines. glob: fast-glob over the contract (local provider)
 * vs fast-glob straight on the same tree on disk, and over the memory provider vs fast-glob
 * straight on the same memfs volume. grep: ours vs a naive loop (walk, read whole file, split,
 * test each line) on disk and through the contract.
 *
 * DSH_FS_BENCH_SEARCH_FILES sets the tree size (default 100,000 files). grep against ripgrep
 * and glob against `rg --files` cover the whole tree; grep against a node loop searches one tenth
 * unless DSH_FS_BENCH_SEARCH_GREP_ALL=1. glob in memory runs at 2,000 and 10,000 files whatever
 * the size, and grep in memory over one tenth of the tree.
 */

const SECTION = 'search';

/** DSH_FS_BENCH_SEARCH_HELPERS=threads|processes: the local provider's searchHelpers (default: its own default). */
function helpers(): { searchHelpers?: 'threads' | 'processes' } {
  const kind = process.env.DSH_FS_BENCH_SEARCH_HELPERS;
  if (kind === undefined || kind === '') return {};
  if (kind !== 'threads' && kind !== 'processes') throw new Error(`DSH_FS_BENCH_SEARCH_HELPERS must be threads or processes, got ${kind}`);
  return { searchHelpers: kind };
}
const execFileAsync = promisify(execFile);

/** The shape the search benchmark reports; also a BenchRow for the shared table. */
export interface SearchBenchRow extends BenchRow {
  readonly name: string;
  readonly ours_ms: number;
  readonly baseline_ms: number;
  readonly ratio: number;
  readonly note: string;
}

interface Tree {
  readonly files: number;
  /** Relative path → content. */
  readonly entries: readonly (readonly [string, string])[];
  readonly needles: number;
}

const EXTENSIONS = ['ts', 'md', 'json'] as const;

/** 10 × 10 × 10 directories of `files / 1000` files each; one file in 97 holds the needle. */
function makeTree(files: number): Tree {
  const perLeaf = Math.max(1, Math.round(files / 1000));
  const entries: [string, string][] = [];
  let needles = 0;
  let n = 0;
  for (let a = 0; a < 10; a++) {
    for (let b = 0; b < 10; b++) {
      for (let c = 0; c < 10; c++) {
        for (let f = 0; f < perLeaf; f++, n++) {
          const ext = EXTENSIONS[n % EXTENSIONS.length]!;
          const hit = n % 97 === 0;
          if (hit) needles++;
          const body = [`// file ${n}`, 'export const value = 1;', hit ? 'const needle = true;' : 'const other = false;', ''].join('\n');
          entries.push([`d${a}/e${b}/f${c}/file${n}.${ext}`, body]);
        }
      }
    }
  }
  return { files: entries.length, entries, needles };
}

async function writeTree(root: string, tree: Tree): Promise<void> {
  const dirs = new Set(tree.entries.map(([p]) => posix.dirname(p)));
  for (const d of dirs) await mkdir(join(root, d), { recursive: true });
  const batch = 256;
  for (let i = 0; i < tree.entries.length; i += batch) {
    await Promise.all(tree.entries.slice(i, i + batch).map(([p, body]) => writeFile(join(root, p), body)));
  }
}

/** The naive grep on disk: recursive readdir, whole-file read, split, test. */
async function naiveDiskGrep(dir: string, re: RegExp): Promise<number> {
  let hits = 0;
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) {
        for (const line of (await readFile(p, 'utf8')).split('\n')) if (re.test(line)) hits++;
      }
    }
  };
  await walk(dir);
  return hits;
}

/** The naive grep through the contract: listDir walk, readText, split, test. */
async function naiveContractGrep(fs: FileSystem, dir: string, re: RegExp): Promise<number> {
  let hits = 0;
  const walk = async (d: string): Promise<void> => {
    for (const e of await fs.listDir(await fs.resolve(d))) {
      if (e.type === 'directory') await walk(posix.join(d, e.name));
      else if (e.type === 'file') {
        for (const line of (await fs.readText(e.target)).text.split('\n')) if (re.test(line)) hits++;
      }
    }
  };
  await walk(dir);
  return hits;
}

function searchRow(
  name: string,
  kase: string,
  subject: string,
  ours: Timing,
  baselineName: string,
  baseline: Timing,
  note: string,
  goal?: number,
): SearchBenchRow {
  const ratioNow = baseline.median === 0 ? Number.NaN : ours.median / baseline.median;
  if (goal !== undefined) note = `${note}; goal ≤ ${goal}×: ${Number.isNaN(ratioNow) ? 'not measured' : ratioNow <= goal ? 'met' : 'MISSED'}`;
  const base = row(
    { section: SECTION, case: kase, subject, unit: 'ms', note },
    ours,
    { name: baselineName, timing: baseline },
    goal === undefined ? undefined : { text: `≤ ${goal}×`, maxRatio: goal },
  );
  return {
    ...base,
    name,
    ours_ms: ours.median,
    baseline_ms: baseline.median,
    ratio: baseline.median === 0 ? Number.NaN : ours.median / baseline.median,
    note,
  };
}

/** Peak heap growth (MiB) during one run of `fn`, sampled every 2 ms after a full collection. */
async function peakHeapMiB(fn: () => Promise<unknown>): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  const start = process.memoryUsage().heapUsed;
  let peak = start;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 2);
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  return (peak - start) / (1024 * 1024);
}

const mib = (n: number) => `peak heap +${n.toFixed(1)} MiB`;

/** ripgrep's matches for `needle` under `dir` (every file: no ignore rules, hidden included), or undefined without rg. */
function rgAvailable(): boolean {
  return spawnSync('rg', ['--version'], { stdio: 'ignore' }).status === 0;
}

async function rgCount(dir: string, pattern: string): Promise<number> {
  const { stdout } = await execFileAsync('rg', ['--no-ignore', '--hidden', '--no-heading', '-n', pattern, dir], { maxBuffer: 256 * 1024 * 1024 });
  return stdout.length === 0 ? 0 : stdout.trimEnd().split('\n').length;
}

/** What `rg --files` lists under `dir` with one glob (every file: no ignore rules, hidden included). */
async function rgFiles(dir: string, pattern: string): Promise<number> {
  const { stdout } = await execFileAsync('rg', ['--files', '--no-ignore', '--hidden', '-g', pattern, dir], { maxBuffer: 256 * 1024 * 1024 });
  return stdout.length === 0 ? 0 : stdout.trimEnd().split('\n').length;
}

function expectCount(what: string, got: number, want: number): void {
  if (got !== want) throw new Error(`search bench: ${what} found ${got}, expected ${want}`);
}

export async function runSearchBench(): Promise<SearchBenchRow[]> {
  const files = Number(process.env.DSH_FS_BENCH_SEARCH_FILES ?? 100_000);
  if (!Number.isSafeInteger(files) || files < 1000) throw new RangeError('DSH_FS_BENCH_SEARCH_FILES must be an integer of at least 1000');
  const tree = makeTree(files);
  const tsCount = tree.entries.filter(([p]) => p.endsWith('.ts')).length;
  const rows: SearchBenchRow[] = [];
  const { dir, cleanup } = await tempDir('search');
  try {
    const root = join(dir, 'tree');
    await writeTree(root, tree);
    const local = createLocalFs({ root, ...helpers() });
    const pinnedLocal = createLocalFs({ root, ...helpers(), pinSearchReads: true });
    // The memory provider gets one tenth of the tree: its listDir costs ~0.2 ms per entry.
    const tenth = tree.entries.filter(([p]) => p.startsWith('d0/'));
    const memory = createMemoryFs({ cwd: '/tree', files: Object.fromEntries(tenth) });
    const size = `${tree.files.toLocaleString('en')} files`;
    const memSize = `${tenth.length.toLocaleString('en')} files`;

    // glob, whole tree. The contract walk (resolve + listDir per directory, nothing else) shows
    // how much of the cost is the provider's listing rather than the search.
    const heavy = files >= 50_000;
    const globReps = { reps: reps(heavy ? 2 : 3), warmup: heavy ? 0 : 1 };
    // Paths alone on both sides (fast-glob's default), then paths with size and mtime on both.
    const g = await interleave(
      {
        ours: async () => expectCount('glob (local)', (await glob(local, '**/*.ts', { cwd: root, limit: files, stats: false })).matches.length, tsCount),
        fastGlob: async () => expectCount('fast-glob (disk)', (await fg('**/*.ts', { cwd: root, dot: true })).length, tsCount),
        oursStats: async () => expectCount('glob with stats (local)', (await glob(local, '**/*.ts', { cwd: root, limit: files })).matches.length, tsCount),
        fastGlobStats: async () => expectCount('fast-glob with stats (disk)', (await fg('**/*.ts', { cwd: root, dot: true, stats: true })).length, tsCount),
      },
      globReps,
    );
    const matches = `${tsCount.toLocaleString('en')} matches`;
    const globPeak = await peakHeapMiB(() => glob(local, '**/*.ts', { cwd: root, limit: files, stats: false }));
    const globStatsPeak = await peakHeapMiB(() => glob(local, '**/*.ts', { cwd: root, limit: files }));
    rows.push(
      searchRow('glob **/*.ts, local', `${size} on disk, **/*.ts`, 'glob over the contract (local), stats: false', g.ours, 'fast-glob on disk', g.fastGlob, `${matches}; ${mib(globPeak)}`, 1),
    );
    if (rgAvailable()) {
      const rf = await interleave(
        {
          ours: async () => expectCount('glob (local)', (await glob(local, '**/*.ts', { cwd: root, limit: files, stats: false })).matches.length, tsCount),
          rg: async () => expectCount('rg --files', await rgFiles(root, '*.ts'), tsCount),
        },
        globReps,
      );
      rows.push(searchRow('glob **/*.ts, local, vs rg --files', `${size} on disk, **/*.ts`, 'glob over the contract (local), stats: false', rf.ours, 'rg --files -g *.ts', rf.rg, matches, 1.5));
    }
    rows.push(
      searchRow('glob **/*.ts, local, with stats', `${size} on disk, **/*.ts`, 'glob over the contract (local), size and mtime of each match', g.oursStats, 'fast-glob on disk, stats: true', g.fastGlobStats, `${matches}; ${mib(globStatsPeak)}`),
    );

    // glob in memory at 2,000 and 10,000 files: one tenth of a tree of 20,000 and of 100,000.
    for (const n of [2_000, 10_000]) {
      const part = makeTree(n * 10).entries.filter(([p]) => p.startsWith('d0/'));
      const mem = createMemoryFs({ cwd: '/tree', files: Object.fromEntries(part) });
      const partTs = part.filter(([p]) => p.endsWith('.ts')).length;
      const memFg = mem.provider.volume as unknown as fg.FileSystemAdapter;
      const m = await interleave(
        {
          ours: async () => expectCount('glob (memory)', (await glob(mem, '**/*.ts', { cwd: '/tree', limit: files, stats: false })).matches.length, partTs),
          fastGlob: async () => expectCount('fast-glob (memfs)', (await fg('**/*.ts', { cwd: '/tree', dot: true, fs: memFg })).length, partTs),
          oursStats: async () => expectCount('glob with stats (memory)', (await glob(mem, '**/*.ts', { cwd: '/tree', limit: files })).matches.length, partTs),
        },
        { reps: reps(5), warmup: 1 },
      );
      const memMatches = `${partTs.toLocaleString('en')} matches`;
      const label = `${n.toLocaleString('en')} files in memory, **/*.ts`;
      const memPeak = await peakHeapMiB(() => glob(mem, '**/*.ts', { cwd: '/tree', limit: files, stats: false }));
      rows.push(
        searchRow(`glob **/*.ts, memory, ${n}`, label, 'glob over the contract (memory), stats: false', m.ours, 'fast-glob on the memfs volume', m.fastGlob, `${memMatches}; ${mib(memPeak)}`, 1),
      );
      rows.push(
        // fast-glob's stats: true finds nothing over a memfs volume, so the baseline is its default.
        searchRow(`glob **/*.ts, memory, ${n}, with stats`, label, 'glob over the contract (memory), size and mtime of each match', m.oursStats, 'fast-glob on the memfs volume (paths only)', m.fastGlob, memMatches),
      );
    }

    // grep: one tenth of the tree unless asked for all of it (every file is read and versioned).
    const all = process.env.DSH_FS_BENCH_SEARCH_GREP_ALL === '1';
    const sub = all ? '' : 'd0';
    const subFiles = all ? tree.entries : tree.entries.filter(([p]) => p.startsWith('d0/'));
    const needles = subFiles.filter(([, body]) => body.includes('needle')).length;
    const re = /needle/;
    const memNeedles = tenth.filter(([, body]) => body.includes('needle')).length;
    const grepCase = `${subFiles.length.toLocaleString('en')} files, /needle/`;
    const d = await interleave(
      {
        ours: async () =>
          expectCount('grep (local)', (await grep(local, re, { path: join(root, sub), gitignore: false, maxMatches: files })).matches.length, needles),
        naive: async () => expectCount('naive grep (disk)', await naiveDiskGrep(join(root, sub), re), needles),
      },
      { reps: reps(3), warmup: 1 },
    );
    const grepPeak = await peakHeapMiB(() => grep(local, re, { path: join(root, sub), gitignore: false, maxMatches: files }));
    rows.push(
      searchRow('grep /needle/, local', `${grepCase} on disk`, 'grep over the contract (local)', d.ours, 'sequential loop on node:fs', d.naive, `${needles} matches; ${mib(grepPeak)}`, 1),
    );
    // Against ripgrep: the whole tree, both reading every file.
    const allNeedles = tree.entries.filter(([, body]) => body.includes('needle')).length;
    const allCase = `${tree.files.toLocaleString('en')} files, /needle/`;
    if (rgAvailable()) {
      const r = await interleave(
        {
          ours: async () => expectCount('grep (local)', (await grep(local, re, { path: root, gitignore: false, maxMatches: files })).matches.length, allNeedles),
          rg: async () => expectCount('ripgrep', await rgCount(root, 'needle'), allNeedles),
          // Each file pinned with O_PATH before it is opened (docs/local.md): what the pin costs.
          pinned: async () =>
            expectCount('grep (local, pinned)', (await grep(pinnedLocal, re, { path: root, gitignore: false, maxMatches: files })).matches.length, allNeedles),
        },
        { reps: reps(heavy ? 2 : 3), warmup: 1 },
      );
      rows.push(searchRow('grep /needle/, local, vs rg', `${allCase} on disk`, 'grep over the contract (local)', r.ours, 'ripgrep (rg)', r.rg, `${allNeedles} matches`, 2));
      rows.push(searchRow('grep /needle/, local pinned, vs rg', `${allCase} on disk`, 'grep over the contract (local), pinSearchReads', r.pinned, 'ripgrep (rg)', r.rg, `${allNeedles} matches`));
    } else {
      const none = { median: 0, min: 0, max: 0, reps: 0 };
      rows.push(searchRow('grep /needle/, local, vs rg', `${allCase} on disk`, 'grep over the contract (local)', d.ours, 'ripgrep (rg)', none, 'rg not installed', 2));
    }

    // listDir of one directory of 10,000 entries vs readdir with file types.
    const flat = join(dir, 'flat');
    await mkdir(flat);
    for (let i = 0; i < 10_000; i += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, j) => writeFile(join(flat, `f${i + j}.ts`), 'x\n')));
    }
    const flatFs = createLocalFs({ root: flat });
    const l = await interleave(
      {
        ours: async () => expectCount('listDir (local)', (await flatFs.listDir(await flatFs.resolve(flat), { stats: false })).length, 10_000),
        readdir: async () => expectCount('readdir', (await readdir(flat, { withFileTypes: true })).length, 10_000),
        oursStats: async () => expectCount('listDir with stats (local)', (await flatFs.listDir(await flatFs.resolve(flat))).length, 10_000),
        readdirStats: async () => {
          const names = await readdir(flat, { withFileTypes: true });
          for (const d of names) lstatSync(join(flat, d.name));
          expectCount('readdir + lstat', names.length, 10_000);
        },
      },
      { reps: reps(5), warmup: 1 },
    );
    rows.push(searchRow('listDir 10,000 entries, local', '10,000 files in one directory', 'listDir (local), stats: false', l.ours, 'fs.readdir with file types', l.readdir, 'types only on both sides', 3));
    rows.push(
      searchRow('listDir 10,000 entries, local, with stats', '10,000 files in one directory', 'listDir (local), size and mtime of each entry', l.oursStats, 'fs.readdir with file types, then lstatSync of each', l.readdirStats, 'an lstat per entry on both sides'),
    );

    const c = await interleave(
      {
        ours: async () => expectCount('grep (memory)', (await grep(memory, re, { path: '/tree', gitignore: false, maxMatches: files })).matches.length, memNeedles),
        naive: async () => expectCount('naive grep (memory contract)', await naiveContractGrep(memory, '/tree', re), memNeedles),
      },
      { reps: reps(3), warmup: 1 },
    );
    rows.push(searchRow('grep /needle/, memory', `${memSize}, /needle/ in memory`, 'grep over the contract (memory)', c.ours, 'naive loop over the contract', c.naive, `${memNeedles} matches`));
  } finally {
    await cleanup();
  }
  return rows;
}
