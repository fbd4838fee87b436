import { constants as fsc } from 'node:fs';
import { cp, mkdir, open, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { sourceText } from '../fixtures.js';
import { collect, interleave, MiB, reps, row, summarise, tempDir, usedBytes, type BenchRow } from '../lib.js';
import { smallFile, toolHarness } from '../subjects.js';

const SECTION = 'overlay';
const OWNER = 'bench-session';
const COMMIT_FILES = 1_000;
const COMMIT_FILES_LARGE = process.env.BENCH_QUICK ? 2_000 : 10_000;
const SMALL_READS = 200;
/** Persisted writes timed one by one; the first and the last WINDOW are compared. */
const PERSISTED_WRITES = process.env.BENCH_QUICK ? 2_000 : 10_000;
const WINDOW = PERSISTED_WRITES / 10;

const rel = (i: number) => `pkg${String(i % 10)}/f${String(i).padStart(5, '0')}.ts`;

/**
 * The overlay's costs: reading a file it does not hold (a pass-through to the lower) against the
 * local provider itself, and committing 1,000 changed files against copying them with fs.cp.
 */
export async function runOverlayBench(): Promise<BenchRow[]> {
  // BENCH_OVERLAY=forks: only the fork rows (the rest of the section takes minutes).
  if (process.env.BENCH_OVERLAY === 'forks') {
    const { dir, cleanup } = await tempDir('overlay');
    try {
      return await forks(dir);
    } finally {
      await cleanup();
    }
  }
  const rows: BenchRow[] = [];
  const { dir, cleanup } = await tempDir('overlay');
  try {
    // --- Untouched reads, through the read tool on both sides.
    const lowerDir = join(dir, 'lower');
    for (let i = 0; i < SMALL_READS; i++) {
      await mkdir(join(lowerDir, rel(i), '..'), { recursive: true });
      await writeFile(join(lowerDir, rel(i)), smallFile(i));
    }
    const big = sourceText(1 * MiB, 'MIDPOINT_ALPHA');
    await writeFile(join(lowerDir, 'big.txt'), big.text);
    const local = createLocalFs({ root: lowerDir });
    const overlay = await createOverlayFs({ lower: createLocalFs({ root: lowerDir }) });
    const onLocal = toolHarness(local);
    const onOverlay = toolHarness(overlay);
    const exec = { owner: OWNER };
    const read = async (ctx: typeof onLocal, path: string) => {
      const r = await ctx.tools.execute('read', { file_path: path }, exec);
      if (r.isError) throw new Error(r.text);
    };
    const small = await interleave(
      {
        local: async () => {
          for (let i = 0; i < SMALL_READS; i++) await read(onLocal, join(lowerDir, rel(i)));
        },
        overlay: async () => {
          for (let i = 0; i < SMALL_READS; i++) await read(onOverlay, join(lowerDir, rel(i)));
        },
      },
      { reps: reps(9), warmup: 2, ops: SMALL_READS, scale: 1000 },
    );
    const large = await interleave(
      { local: () => read(onLocal, join(lowerDir, 'big.txt')), overlay: () => read(onOverlay, join(lowerDir, 'big.txt')) },
      // ~10 ms each and noisy on a shared machine: more rounds for a steadier median.
      { reps: reps(25), warmup: 3 },
    );
    const goal = { text: '≤ 1.1×', maxRatio: 1.1 };
    rows.push(
      row({ section: SECTION, case: "untouched 1 KiB files", subject: 'read tool (overlay over local)', unit: 'µs/op' }, small.overlay, { name: 'read tool (local)', timing: small.local }, goal),
      row({ section: SECTION, case: 'untouched 1 MiB file', subject: 'read tool (overlay over local)', unit: 'ms' }, large.overlay, { name: 'read tool (local)', timing: large.local }, goal),
    );

    rows.push(...(await commitCase(dir, COMMIT_FILES, reps(3), true)));
    // 10,000 files: the durable commit against the durable baseline only (fewer rounds: each is
    // ten thousand fsyncs for the baseline).
    rows.push(...(await commitCase(dir, COMMIT_FILES_LARGE, reps(2), false)));

    rows.push(...(await persistedWrites(dir)));
    rows.push(...(await forks(dir)));
  } finally {
    await cleanup();
  }
  return rows;
}

/**
 * Commit of `files` changed files: the overlay over a durable local lower against the durable
 * baseline (per file a temp file, fsync, rename; then one fsync per directory), and with `all`
 * also over a non-durable lower and against fs.cp. Every round starts from a fresh overlay
 * (untimed) and changes every file, so each commit has the same work to do.
 */
async function commitCase(dir: string, files: number, n: number, all: boolean): Promise<BenchRow[]> {
  const target = join(dir, `target-${files}`);
  const staged = join(dir, `staged-${files}`);
  const content = (i: number, round: number) => `${smallFile(i)}// revision ${round}\n`;
  for (let i = 0; i < files; i++) {
    await mkdir(join(target, rel(i), '..'), { recursive: true });
    await writeFile(join(target, rel(i)), content(i, 0));
  }
  const commitTimes = { durable: [] as number[], nondurable: [] as number[], cp: [] as number[], baseline: [] as number[] };
  const kinds = all ? (['durable', 'nondurable', 'cp', 'baseline'] as const) : (['durable', 'baseline'] as const);
  let round = 0;
  // No warm-up round: each timed run is already a thousand operations or more.
  for (let r = 0; r < n; r++) {
    for (const kind of kinds) {
      round++;
      let elapsed: number;
      if (kind === 'baseline') {
        const t0 = performance.now();
        const dirs = new Set<string>();
        for (let i = 0; i < files; i++) {
          const path = join(target, rel(i));
          const temp = `${path}.${round}.tmp`;
          const h = await open(temp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o644);
          await h.writeFile(content(i, round));
          await h.sync();
          await h.close();
          await rename(temp, path);
          dirs.add(dirname(path));
        }
        for (const d of dirs) {
          const h = await open(d, fsc.O_RDONLY);
          await h.sync();
          await h.close();
        }
        elapsed = performance.now() - t0;
      } else if (kind === 'cp') {
        for (let i = 0; i < files; i++) {
          await mkdir(join(staged, rel(i), '..'), { recursive: true });
          await writeFile(join(staged, rel(i)), content(i, round));
        }
        const t0 = performance.now();
        await cp(staged, target, { recursive: true, force: true });
        elapsed = performance.now() - t0;
      } else {
        const sandbox = await createOverlayFs({ lower: createLocalFs({ root: target, durable: kind === 'durable' }) });
        for (let i = 0; i < files; i++) await sandbox.writeText(await sandbox.resolve(join(target, rel(i))), content(i, round));
        const t0 = performance.now();
        const result = await sandbox.commit();
        elapsed = performance.now() - t0;
        if (result.committed.length !== files || result.conflicts.length + result.failed.length > 0) {
          throw new Error(`commit: ${result.committed.length} committed, ${result.conflicts.length} conflicts, ${result.failed.length} failed`);
        }
      }
      commitTimes[kind].push(elapsed);
    }
  }
  const c = `commit ${files.toLocaleString('en')} changed ~1 KiB files`;
  const durableBase = { name: 'durable baseline (temp, fsync, rename; 1 fsync/dir)', timing: summarise(commitTimes.baseline) };
  const durableRow = (goal?: { text: string; maxRatio: number }) =>
    row({ section: SECTION, case: c, subject: 'overlay commit (local, durable)', unit: 'ms' }, summarise(commitTimes.durable), durableBase, goal);
  if (!all) return [durableRow()];
  const cpBase = { name: 'fs.cp (no fsync)', timing: summarise(commitTimes.cp) };
  return [
    row({ section: SECTION, case: c, subject: 'overlay commit (local, durable)', unit: 'ms' }, summarise(commitTimes.durable), cpBase),
    row({ section: SECTION, case: c, subject: 'overlay commit (local, durable: false)', unit: 'ms' }, summarise(commitTimes.nondurable), cpBase),
    durableRow({ text: '≤ 1.5×', maxRatio: 1.5 }),
  ];
}

/**
 * Writes to a sandbox persisted in a state directory, timed one by one: a save must cost what the
 * change costs, not what the sandbox holds (the last writes against the first). Then what the
 * upper holds in memory per file, persisted and not.
 */
async function persistedWrites(dir: string): Promise<BenchRow[]> {
  const lowerDir = join(dir, 'persist-lower');
  for (let p = 0; p < 10; p++) await mkdir(join(lowerDir, `pkg${p}`), { recursive: true });
  const contents = Array.from({ length: PERSISTED_WRITES }, (_, i) => smallFile(i));
  const held: unknown[] = [];
  const n = PERSISTED_WRITES.toLocaleString('en');

  let before = usedBytes();
  const sandbox = await createOverlayFs({ lower: createLocalFs({ root: lowerDir }), stateDir: join(dir, 'persist-state') });
  held.push(sandbox);
  const times: number[] = [];
  // Peak: heap + external sampled (without forcing a collection) every 100 writes.
  const sample = () => process.memoryUsage().heapUsed + process.memoryUsage().external;
  let persistedPeak = 0;
  for (let i = 0; i < PERSISTED_WRITES; i++) {
    const t0 = performance.now();
    await sandbox.writeText(await sandbox.resolve(join(lowerDir, `pkg${i % 10}/w${i}.ts`)), contents[i]!);
    times.push(performance.now() - t0);
    if (i % 100 === 99) persistedPeak = Math.max(persistedPeak, sample() - before);
  }
  const persistedPerFile = (usedBytes() - before) / PERSISTED_WRITES;
  held.length = 0;

  before = usedBytes();
  const inMemory = await createOverlayFs({ lower: createLocalFs({ root: lowerDir }) });
  held.push(inMemory);
  let memoryPeak = 0;
  for (let i = 0; i < PERSISTED_WRITES; i++) {
    await inMemory.writeText(await inMemory.resolve(join(lowerDir, `pkg${i % 10}/w${i}.ts`)), contents[i]!);
    if (i % 100 === 99) memoryPeak = Math.max(memoryPeak, sample() - before);
  }
  const memoryPerFile = (usedBytes() - before) / PERSISTED_WRITES;
  held.length = 0;
  const size = Buffer.byteLength(contents[0]!);

  return [
    row(
      { section: SECTION, case: `${n} persisted ~1 KiB writes (stateDir)`, subject: `write, last ${WINDOW.toLocaleString('en')}`, unit: 'ms' },
      summarise(times.slice(-WINDOW)),
      { name: `write, first ${WINDOW.toLocaleString('en')}`, timing: summarise(times.slice(0, WINDOW)) },
      { text: '≤ 1.3×', maxRatio: 1.3 },
    ),
    row(
      { section: SECTION, case: `${n}-file sandbox, retained heap + external`, subject: 'overlay, persisted (stateDir)', unit: 'B/file', note: `file content ${size} B` },
      persistedPerFile,
      { name: 'overlay, in memory', timing: memoryPerFile },
    ),
    row(
      { section: SECTION, case: `${n}-file sandbox, peak heap + external while writing`, subject: 'overlay, persisted (stateDir)', unit: 'MiB', note: `file content ${size} B; sampled every 100 writes` },
      persistedPeak / MiB,
      { name: 'overlay, in memory', timing: memoryPeak / MiB },
    ),
  ];
}

const FORKS = 200;
const FORK_BIG = 10_000;
const FORK_SMALL = 10;
const DEPTH = 5;
const DEEP_READS = 500;

/** An in-memory sandbox over a memory lower with `n` changed ~1 KiB files. */
async function sandboxWith(n: number): Promise<OverlayFileSystem> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`/${rel(i)}`] = smallFile(i);
  const sandbox = await createOverlayFs({ lower: createMemoryFs({ files }) });
  for (let i = 0; i < n; i++) await sandbox.writeText(await sandbox.resolve(`/${rel(i)}`), `${smallFile(i)}// changed\n`);
  return sandbox;
}

/**
 * Forks: the time and memory of a fork of a sandbox holding 10,000 changed files against one
 * holding 10 (constant time: the same); reads in a fork five levels deep against the root overlay.
 */
async function forks(dir: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const big = await sandboxWith(FORK_BIG);
  const small = await sandboxWith(FORK_SMALL);
  const sizes = `${FORK_BIG.toLocaleString('en')} changed files`;
  const forkAll = async (from: OverlayFileSystem) => {
    const held: OverlayFileSystem[] = [];
    for (let i = 0; i < FORKS; i++) held.push(await from.fork());
    return held;
  };
  // Each run starts from a collected heap: the forks a run made are garbage for the next, and a
  // collection that lands in one run would be charged to whichever variant it hits.
  const time = await interleave(
    { big: () => forkAll(big), small: () => forkAll(small) },
    { reps: reps(21), warmup: 3, ops: FORKS, scale: 1000, before: () => collect() },
  );
  const goal = { text: '≤ 1.2× (same within noise)', maxRatio: 1.2 };
  rows.push(
    row(
      { section: SECTION, case: `fork() of an in-memory sandbox`, subject: `fork, ${sizes}`, unit: 'µs/op' },
      time.big,
      { name: `fork, ${FORK_SMALL} changed files`, timing: time.small },
      goal,
    ),
  );
  const perFork = async (from: OverlayFileSystem) => {
    const before = usedBytes();
    const held = await forkAll(from);
    const bytes = (usedBytes() - before) / FORKS;
    held.length = 0;
    return bytes;
  };
  const memSamples = { big: [] as number[], small: [] as number[] };
  for (let r = 0; r < reps(3); r++) {
    memSamples.big.push(await perFork(big));
    memSamples.small.push(await perFork(small));
  }
  rows.push(
    row(
      { section: SECTION, case: `fork() of an in-memory sandbox, retained heap + external`, subject: `fork, ${sizes}`, unit: 'B/fork' },
      summarise(memSamples.big),
      { name: `fork, ${FORK_SMALL} changed files`, timing: summarise(memSamples.small) },
      goal,
    ),
  );

  // Persisted: the fork shares the saved state and blobs by hard links (one per blob), so it is
  // not constant time; measured, not held to the goal.
  const persisted = async (n: number, tag: string) => {
    const lowerDir = join(dir, `fork-lower-${tag}`);
    for (let p = 0; p < 10; p++) await mkdir(join(lowerDir, `pkg${p}`), { recursive: true });
    const sandbox = await createOverlayFs({ lower: createLocalFs({ root: lowerDir }), stateDir: join(dir, `fork-state-${tag}`) });
    for (let i = 0; i < n; i++) await sandbox.writeText(await sandbox.resolve(join(lowerDir, `pkg${i % 10}/w${i}.ts`)), smallFile(i));
    return sandbox;
  };
  const pBig = await persisted(FORK_BIG, 'big');
  const pSmall = await persisted(FORK_SMALL, 'small');
  let k = 0;
  const pTime = await interleave(
    { big: () => pBig.fork({ stateDir: join(dir, `fork-into-${k++}`) }), small: () => pSmall.fork({ stateDir: join(dir, `fork-into-${k++}`) }) },
    { reps: reps(5), warmup: 1 },
  );
  rows.push(
    row(
      { section: SECTION, case: 'fork({ stateDir }) of a persisted sandbox', subject: `fork, ${sizes}`, unit: 'ms', note: 'one hard link per blob' },
      pTime.big,
      { name: `fork, ${FORK_SMALL} changed files`, timing: pTime.small },
    ),
  );

  // Reads of changed files in a fork five levels deep (each level changed files of its own) against the root.
  let deep: OverlayFileSystem = big;
  for (let d = 0; d < DEPTH; d++) {
    deep = await deep.fork();
    for (let i = 0; i < 100; i++) await deep.writeText(await deep.resolve(`/level${d}/f${i}.ts`), smallFile(i));
  }
  const targets = await Promise.all(Array.from({ length: DEEP_READS }, (_, i) => big.resolve(`/${rel((i * 19) % FORK_BIG)}`)));
  const readAll = async (fs: OverlayFileSystem) => {
    for (const t of targets) await fs.readBytes(t, { maxBytes: 1 << 20 });
  };
  const reads = await interleave({ deep: () => readAll(deep), root: () => readAll(big) }, { reps: reps(15), warmup: 3, ops: DEEP_READS, scale: 1000 });
  rows.push(
    row(
      { section: SECTION, case: `read of a changed file (readBytes, ${sizes})`, subject: `fork ${DEPTH} levels deep`, unit: 'µs/op' },
      reads.deep,
      { name: 'root overlay', timing: reads.root },
      { text: '≤ 1.2×', maxRatio: 1.2 },
    ),
  );
  return rows;
}
