import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { collect, interleave, reps, row, summarise, usedBytes, type BenchRow } from '../lib.js';
import { smallFile } from '../subjects.js';

const SECTION = 'history';
/** Writes per run of the checkpoint-cost rows. */
const WRITES = process.env.BENCH_QUICK ? 2_000 : 10_000;
/** Files the sandbox of the rewind rows holds, so that a layer walk would show. */
const LAYER_FILES = process.env.BENCH_QUICK ? 2_000 : 10_000;
const FAR = 1_000;
const NEAR = 10;
/** Rewinds timed per run (each in its own fork, made untimed before). */
const REWINDS = 50;

const rel = (i: number) => `/pkg${String(i % 10)}/f${String(i).padStart(5, '0')}.ts`;

/**
 * Checkpoints (docs/history.md):
 * - a checkpoint per write: 10,000 writes of new ~1 KiB files into an in-memory sandbox keeping
 *   the default 1,000 checkpoints, against one keeping none (`keepCheckpoints: 0`). Goals: ≤ 1.1×
 *   the time, ≤ 1.2× the retained heap + external (a checkpoint shares its maps with the layer).
 * - rewind across 1,000 checkpoints against across 10: a sandbox of 10,000 changed files, then
 *   1,010 writes to one file; a rewind costs the differences between the layers (one file
 *   either way), not the changes between them. Goal: ≤ 1.2× (the same within noise).
 */
export async function runHistoryBench(): Promise<BenchRow[]> {
  return [...(await perWrite()), ...(await rewinds())];
}

async function writeAll(keepCheckpoints: number): Promise<OverlayFileSystem> {
  const fs = await createOverlayFs({ lower: createMemoryFs(), keepCheckpoints });
  for (let i = 0; i < WRITES; i++) await fs.writeText(await fs.resolve(rel(i)), smallFile(i));
  return fs;
}

async function perWrite(): Promise<BenchRow[]> {
  const time = await interleave(
    { checkpoints: () => writeAll(1_000), none: () => writeAll(0) },
    { reps: reps(5), warmup: 1, before: () => collect() },
  );
  const retained = async (keep: number) => {
    const before = usedBytes();
    const fs = await writeAll(keep);
    const bytes = usedBytes() - before;
    if (fs.checkpoints().length !== Math.min(keep, WRITES)) throw new Error('bench: unexpected checkpoint count');
    return bytes / WRITES;
  };
  const mem = { checkpoints: [] as number[], none: [] as number[] };
  for (let r = 0; r < reps(2); r++) {
    mem.checkpoints.push(await retained(1_000));
    mem.none.push(await retained(0));
  }
  const c = `${WRITES.toLocaleString('en')} writes of new ~1 KiB files (in memory)`;
  return [
    row(
      { section: SECTION, case: c, subject: 'a checkpoint per write (keep 1,000)', unit: 'ms' },
      time.checkpoints,
      { name: 'keepCheckpoints: 0', timing: time.none },
      { text: '≤ 1.1×', maxRatio: 1.1 },
    ),
    row(
      { section: SECTION, case: `${c}, retained heap + external`, subject: 'a checkpoint per write (keep 1,000)', unit: 'B/file' },
      summarise(mem.checkpoints),
      { name: 'keepCheckpoints: 0', timing: summarise(mem.none) },
      { text: '≤ 1.2×', maxRatio: 1.2 },
    ),
  ];
}

async function rewinds(): Promise<BenchRow[]> {
  const files: Record<string, string> = {};
  for (let i = 0; i < LAYER_FILES; i++) files[rel(i)] = smallFile(i);
  // Enough kept that the checkpoint 1,000 changes back is there.
  const fs = await createOverlayFs({ lower: createMemoryFs({ files }), keepCheckpoints: FAR + NEAR + 10 });
  for (let i = 0; i < LAYER_FILES; i++) await fs.writeText(await fs.resolve(rel(i)), `${smallFile(i)}// changed\n`);
  const hot = await fs.resolve('/hot.ts');
  for (let i = 0; i <= FAR + NEAR; i++) await fs.writeText(hot, `export const step = ${i};\n`);
  const last = fs.checkpoints().at(-1)!.id;
  const forks: Record<'far' | 'near', OverlayFileSystem[]> = { far: [], near: [] };
  const time = await interleave(
    {
      far: async () => {
        for (const f of forks.far) await f.rewind(last - FAR);
      },
      near: async () => {
        for (const f of forks.near) await f.rewind(last - NEAR);
      },
    },
    {
      reps: reps(15),
      warmup: 2,
      ops: REWINDS,
      scale: 1000,
      before: async (k) => {
        forks[k] = [];
        for (let i = 0; i < REWINDS; i++) forks[k].push(await fs.fork());
        collect();
      },
    },
  );
  return [
    row(
      { section: SECTION, case: `rewind of a sandbox of ${LAYER_FILES.toLocaleString('en')} changed files (in a fresh fork)`, subject: `rewind across ${FAR.toLocaleString('en')} checkpoints`, unit: 'µs/op', note: 'the changes between touch one file' },
      time.far,
      { name: `rewind across ${NEAR} checkpoints`, timing: time.near },
      { text: '≤ 1.2× (the same within noise)', maxRatio: 1.2 },
    ),
  ];
}
