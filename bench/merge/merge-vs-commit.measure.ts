// A merge of a fork holding 1,000 changed files into its parent, against a plain commit of the same
// 1,000 files, side by side and alternating (the machine is shared). Run by hand:
//   npx vitest run bench/merge/merge-vs-commit.measure.ts --dir bench   (prints the figures)
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { merge } from '../../src/review/index.js';

const FILES = Number(process.env.MERGE_FILES ?? 1000);
const ROUNDS = Number(process.env.MERGE_ROUNDS ?? 5);
const content = (i: number, tag: string) => `${Array.from({ length: 40 }, (_, l) => `file ${i} line ${l} ${l === 20 ? tag : ''}`).join('\n')}\n`;

async function project(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'dsh-merge-bench-'));
  await mkdir(join(root, 'src'), { recursive: true });
  for (let i = 0; i < FILES; i++) await writeFile(join(root, 'src', `f${i}.txt`), content(i, 'base'));
  return root;
}

async function change(fs: OverlayFileSystem, tag: string): Promise<void> {
  for (let i = 0; i < FILES; i++) await fs.writeText(await fs.resolve(`src/f${i}.txt`), content(i, tag));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

it('merge of 1,000 changed files vs a plain commit of them', { timeout: 1_800_000 }, async () => {
  const merges: number[] = [];
  const commits: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const what of round % 2 === 0 ? ['merge', 'commit'] : ['commit', 'merge']) {
      const root = await project();
      const states = await mkdtemp(join(tmpdir(), 'dsh-merge-bench-state-'));
      try {
        const lower = createLocalFs({ root });
        const parent = await createOverlayFs({ lower, stateDir: join(states, 'parent') });
        await parent.writeText(await parent.resolve('README'), 'parent\n');
        if (what === 'merge') {
          const fork = await parent.fork({ stateDir: join(states, 'fork') });
          await change(fork, 'fork');
          const t = performance.now();
          const r = await merge(parent, fork);
          merges.push(performance.now() - t);
          if (r.merged.length !== FILES) throw new Error(`merged ${r.merged.length}`);
        } else {
          await change(parent, 'fork');
          const t = performance.now();
          const r = await parent.commit();
          commits.push(performance.now() - t);
          if (r.committed.length !== FILES + 1) throw new Error(`committed ${r.committed.length}`);
        }
      } finally {
        await rm(root, { recursive: true, force: true });
        await rm(states, { recursive: true, force: true });
      }
    }
  }
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
  console.log(`files ${FILES}, rounds ${ROUNDS}\nmerge ms: ${fmt(merges)} (median ${median(merges).toFixed(0)})\ncommit ms: ${fmt(commits)} (median ${median(commits).toFixed(0)})\nratio of medians ${(median(merges) / median(commits)).toFixed(2)}, of mins ${(Math.min(...merges) / Math.min(...commits)).toFixed(2)}`);
});
