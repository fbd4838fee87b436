import { execFileSync } from 'node:child_process';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalFs } from '../../src/backends/local/index.js';
import { grep } from '../../src/search/grep.js';
import { interleave, reps, row, tempDir, type BenchRow, type Timing } from '../lib.js';
import { toolHarness } from '../subjects.js';

// Files of any size (V7): windows of a 4 GiB file, a unique edit and a grep of a 1 GiB one, each
// against the native tool, with the peak memory growth of the process while ours ran.
const GiB = 1024 ** 3;
const LINE = 100;
const BLOCK = 64 * 1024 * 1024 - ((64 * 1024 * 1024) % LINE);
const WINDOW = 2000;
const MARKERS = ['MIDDLE_MARKER_ALPHA', 'MIDDLE_MARKER_BRAVO'] as const;
const OWNER = 'bench-session';

const fillerLine = (i: number) => `${String(i).padStart(9, '0')} the quick brown fox jumps over the lazy dog `.padEnd(LINE - 1, '-') + '\n';

/** A text file of about `bytes` in lines of LINE bytes, one of them the marker, near the middle; its line count. */
async function makeFile(path: string, bytes: number): Promise<{ lines: number; marker: number }> {
  const perBlock = BLOCK / LINE;
  const block = Buffer.from(Array.from({ length: perBlock }, (_, i) => fillerLine(i)).join(''));
  const blocks = Math.ceil(bytes / BLOCK);
  const middle = Math.floor(blocks / 2);
  const handle = await open(path, 'w');
  try {
    for (let b = 0; b < blocks; b++) {
      if (b !== middle) {
        await handle.write(block);
        continue;
      }
      const copy = Buffer.from(block);
      copy.write(MARKERS[0].padEnd(LINE - 1, '#'), 7 * LINE);
      await handle.write(copy);
    }
  } finally {
    await handle.close();
  }
  return { lines: blocks * perBlock, marker: middle * perBlock + 8 };
}

/** Runs `fn`, sampling rss every 10 ms; the peak growth over the rss before it, in MiB. */
async function peakMiB(fn: () => Promise<unknown>): Promise<number> {
  const base = process.memoryUsage.rss();
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss() - base)), 10);
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, process.memoryUsage.rss() - base) / 1024 ** 2;
}

const sh = (cmd: string) => void execFileSync('sh', ['-c', cmd], { stdio: ['ignore', 'ignore', 'inherit'], maxBuffer: 1 << 30 });
const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

export async function runHugeFileBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const { dir, cleanup } = await tempDir('huge');
  try {
    const fs = createLocalFs({ root: dir });
    const ctx = toolHarness(fs);
    const exec = { owner: OWNER };
    const n = reps(3);
    const peaks: number[] = [];
    const read = async (path: string, offset: number) => {
      const r = await ctx.tools.execute('read', { file_path: path, offset, limit: WINDOW }, exec);
      if (r.isError) throw new Error(r.text);
    };

    const big = join(dir, 'four.txt');
    const four = await makeFile(big, 4 * GiB);
    // The first read hashes the file once (its version is then cached by its stat): timed alone.
    const t0 = performance.now();
    peaks.push(await peakMiB(() => read(big, 1)));
    rows.push(row({ section: 'huge', case: '4 GiB, first read (hashes it once)', subject: 'read tool (local)', unit: 'ms' }, performance.now() - t0));
    for (const [where, offset] of [
      ['start', 1],
      ['middle', Math.floor(four.lines / 2)],
      ['end', four.lines - WINDOW + 1],
    ] as const) {
      const native = where === 'end' ? `tail -n ${WINDOW} ${q(big)} > /dev/null` : `sed -n '${offset},${offset + WINDOW - 1}p;${offset + WINDOW - 1}q' ${q(big)} > /dev/null`;
      const t: Record<'tool' | 'native', Timing> = await interleave(
        { tool: async () => peaks.push(await peakMiB(() => read(big, offset))), native: async () => sh(native) },
        { reps: n, warmup: 0 },
      );
      rows.push(
        row({ section: 'huge', case: `4 GiB, ${WINDOW}-line window at ${where}`, subject: 'read tool (local)', unit: 'ms' }, t.tool, {
          name: where === 'end' ? 'tail -n' : 'sed -n',
          timing: t.native,
        }, where === 'start' ? { text: '≤ 1.5×', maxRatio: 1.5 } : undefined),
      );
    }
    await fs.remove(await fs.resolve(big));

    const one = join(dir, 'one.txt');
    const safe = join(dir, 'one-safe.txt');
    await makeFile(one, GiB);
    sh(`cp ${q(one)} ${q(safe)}`);
    await read(one, 1);
    let flips = 0;
    let nativeFlips = 0;
    const t: Record<'tool' | 'safe', Timing> = await interleave(
      {
        tool: async () => {
          const [from, to] = [MARKERS[flips % 2]!, MARKERS[(flips + 1) % 2]!];
          flips++;
          peaks.push(
            await peakMiB(async () => {
              const r = await ctx.tools.execute('edit', { file_path: one, old_string: from, new_string: to }, exec);
              if (r.isError) throw new Error(r.text);
            }),
          );
        },
        safe: async () => {
          const [from, to] = [MARKERS[nativeFlips % 2]!, MARKERS[(nativeFlips + 1) % 2]!];
          nativeFlips++;
          sh(`sed 's/${from}/${to}/' ${q(safe)} > ${q(safe)}.tmp && sync ${q(safe)}.tmp && mv ${q(safe)}.tmp ${q(safe)} && sync ${q(dir)}`);
        },
      },
      { reps: n, warmup: 0 },
    );
    rows.push(
      row({ section: 'huge', case: '1 GiB, unique mid-file edit', subject: 'edit tool (local, durable)', unit: 'ms' }, t.tool, {
        name: 'sed > temp, fsync, rename, dir fsync',
        timing: t.safe,
      }, { text: '≤ 1.5×', maxRatio: 1.5 }),
    );
    const g: Record<'grep' | 'rg', Timing> = await interleave(
      {
        grep: async () =>
          peaks.push(
            await peakMiB(async () => {
              const r = await grep(fs, 'MIDDLE_MARKER', { path: one, maxFileBytes: 2 * GiB });
              if (r.matches.length !== 1) throw new Error(`grep found ${r.matches.length}`);
            }),
          ),
        rg: async () => sh(`rg -n MIDDLE_MARKER ${q(one)} > /dev/null`),
      },
      { reps: n, warmup: 0 },
    );
    rows.push(row({ section: 'huge', case: '1 GiB, grep of one line', subject: 'grep (local)', unit: 'ms' }, g.grep, { name: 'rg -n', timing: g.rg }, { text: '≤ 2×', maxRatio: 2 }));
    const peak = Math.max(...peaks);
    rows.push({ section: 'huge', case: 'every call above', subject: 'peak rss growth', unit: 'MiB', value: peak, goal: '≤ 64 MiB above baseline', met: peak <= 64 });
  } finally {
    await cleanup();
  }
  return rows;
}
