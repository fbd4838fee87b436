import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { sourceText } from '../fixtures.js';
import { interleave, MiB, reps, row, summarise, tempDir, type BenchRow } from '../lib.js';
import { smallFile, toolHarness } from '../subjects.js';

const SECTION = 'overlay';
const OWNER = 'bench-session';
const COMMIT_FILES = 1_000;
const SMALL_READS = 200;

const rel = (i: number) => `pkg${String(i % 10)}/f${String(i).padStart(4, '0')}.ts`;

/**
 * The overlay's costs: reading a file it does not hold (a pass-through to the lower) against the
 * local provider itself, and committing 1,000 changed files against copying them with fs.cp.
 */
export async function runOverlayBench(): Promise<BenchRow[]> {
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

    // --- Commit of 1,000 changed files vs fs.cp of the same files. Every round starts from a
    // fresh overlay (untimed) and changes every file, so each commit has the same work to do.
    const target = join(dir, 'target');
    const staged = join(dir, 'staged');
    const content = (i: number, round: number) => `${smallFile(i)}// revision ${round}\n`;
    for (let i = 0; i < COMMIT_FILES; i++) {
      await mkdir(join(target, rel(i), '..'), { recursive: true });
      await writeFile(join(target, rel(i)), content(i, 0));
    }
    const commitTimes = { durable: [] as number[], nondurable: [] as number[], cp: [] as number[] };
    let round = 0;
    const n = reps(3);
    // No warm-up round: each timed run is already a thousand operations.
    for (let r = 0; r < n; r++) {
      for (const kind of ['durable', 'nondurable', 'cp'] as const) {
        round++;
        let elapsed: number;
        if (kind === 'cp') {
          for (let i = 0; i < COMMIT_FILES; i++) {
            await mkdir(join(staged, rel(i), '..'), { recursive: true });
            await writeFile(join(staged, rel(i)), content(i, round));
          }
          const t0 = performance.now();
          await cp(staged, target, { recursive: true, force: true });
          elapsed = performance.now() - t0;
        } else {
          const sandbox = await createOverlayFs({ lower: createLocalFs({ root: target, durable: kind === 'durable' }) });
          for (let i = 0; i < COMMIT_FILES; i++) await sandbox.writeText(await sandbox.resolve(join(target, rel(i))), content(i, round));
          const t0 = performance.now();
          const result = await sandbox.commit();
          elapsed = performance.now() - t0;
          if (result.committed.length !== COMMIT_FILES || result.conflicts.length + result.failed.length > 0) {
            throw new Error(`commit: ${result.committed.length} committed, ${result.conflicts.length} conflicts, ${result.failed.length} failed`);
          }
        }
        commitTimes[kind].push(elapsed);
      }
    }
    const c = `commit ${COMMIT_FILES.toLocaleString('en')} changed ~1 KiB files`;
    const cpBase = { name: 'fs.cp (no fsync)', timing: summarise(commitTimes.cp) };
    rows.push(
      row({ section: SECTION, case: c, subject: 'overlay commit (local, durable)', unit: 'ms' }, summarise(commitTimes.durable), cpBase),
      row({ section: SECTION, case: c, subject: 'overlay commit (local, durable: false)', unit: 'ms' }, summarise(commitTimes.nondurable), cpBase),
    );
  } finally {
    await cleanup();
  }
  return rows;
}
