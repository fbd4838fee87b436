import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createLocalFs, type LocalFileSystem } from '../../src/backends/local/index.js';
import type { FsTarget } from '../../src/seam/index.js';
import { ageAtimes, findTemps, makeArea, runScript, treeDigest, type Area } from './helpers.js';

/**
 * TOCTOU race (P2): a child process keeps swapping `root/sub` between a real directory and a
 * symlink to a directory outside the root, while this process reads and writes through
 * `sub/...` with fresh and with stale targets. Zero bytes may come from outside, nothing outside
 * may change, and no temp file may be left anywhere.
 */

const DURATION_MS = Number(process.env.DSH_FS_RACE_MS ?? 2500);
const INSIDE = 'INSIDE-CONTENT\n';
const OUTSIDE = 'OUTSIDE-SECRET\n';

let area: Area;

beforeAll(async () => {
  area = await makeArea('race');
  await fsp.mkdir(join(area.root, 'sub/ctl'), { recursive: true });
  await fsp.writeFile(join(area.root, 'sub/f.txt'), INSIDE);
  await fsp.writeFile(join(area.root, 'sub/ctl/g.txt'), INSIDE);
  await fsp.mkdir(join(area.outside, 'ctl'));
  await fsp.writeFile(join(area.outside, 'f.txt'), OUTSIDE);
  await fsp.writeFile(join(area.outside, 'w.txt'), OUTSIDE);
  await fsp.writeFile(join(area.outside, 'ctl/g.txt'), OUTSIDE);
  await fsp.symlink(area.outside, join(area.root, '.lnk'));
});

afterAll(async () => {
  await area.cleanup();
});

const racer = (root: string, ms: number) => `
  import { renameSync, rmSync } from 'node:fs';
  const root = ${JSON.stringify(root)};
  const p = (n) => root + '/' + n;
  let junk = 0;
  // Our writer may recreate 'sub' (mkdir -p) while it is parked: move such a directory aside.
  const place = (from, to) => {
    for (let i = 0; i < 5; i++) {
      try { renameSync(p(from), p(to)); return; } catch (e) {
        if (!['EISDIR', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR'].includes(e.code)) throw e;
        try { renameSync(p(to), p('.junk-' + ++junk)); } catch {}
      }
    }
  };
  process.stdout.write('ready\\n');
  const end = Date.now() + ${ms};
  let swaps = 0;
  while (Date.now() < end) {
    place('sub', '.parked');   // sub: real directory -> gone
    place('.lnk', 'sub');      // sub: symlink to outside
    place('sub', '.lnk');
    place('.parked', 'sub');   // sub: real directory again
    swaps++;
  }
  process.stdout.write(JSON.stringify({ swaps, junk }) + '\\n');
`;

test('a directory swapped for a symlink to outside, over and over: nothing leaks', async () => {
  const fs: LocalFileSystem = createLocalFs({ root: area.root });
  const staleRead = await fs.resolve('sub/f.txt');
  const staleWrite = await fs.resolve('sub/w.txt');
  await ageAtimes(area.outside);
  const outsideBefore = await treeDigest(area.outside, { exclude: join(area.outside, 'ctl') });

  const counts: Record<string, number> = {};
  const bump = (k: string) => (counts[k] = (counts[k] ?? 0) + 1);
  let outsideReads = 0;
  let naiveOutsideReads = 0;
  let stop = false;

  const child = runScript(racer(area.root, DURATION_MS), { timeoutMs: DURATION_MS + 20_000 });
  // Give the racer a moment to start; then run until it reports its end.
  await new Promise((r) => setTimeout(r, 300));

  const reader = async (target: () => Promise<FsTarget>, label: string) => {
    while (!stop) {
      try {
        const { text } = await fs.readText(await target());
        if (text === OUTSIDE) outsideReads++;
        bump(`${label}:${text === INSIDE ? 'inside' : 'other-content'}`);
      } catch (err) {
        bump(`${label}:${(err as { code?: string }).code ?? 'raw-error'}`);
      }
    }
  };
  const writer = async (target: () => Promise<FsTarget>, label: string) => {
    let i = 0;
    while (!stop) {
      try {
        await fs.writeText(await target(), `written ${label} ${i++}\n`);
        bump(`${label}:ok`);
      } catch (err) {
        bump(`${label}:${(err as { code?: string }).code ?? 'raw-error'}`);
      }
    }
  };
  // Control: a naive read by name (what the provider must not do), on a separate file.
  const naive = async () => {
    while (!stop) {
      try {
        if ((await fsp.readFile(join(area.root, 'sub/ctl/g.txt'), 'utf8')) === OUTSIDE) naiveOutsideReads++;
      } catch {
        // swapped away
      }
      await new Promise((r) => setImmediate(r));
    }
  };
  const loops = Promise.all([
    reader(() => fs.resolve('sub/f.txt'), 'read-fresh'),
    reader(async () => staleRead, 'read-stale'),
    writer(() => fs.resolve('sub/w.txt'), 'write-fresh'),
    writer(async () => staleWrite, 'write-stale'),
    naive(),
  ]);
  const result = await child;
  stop = true;
  await loops;

  expect(result.code, result.stderr).toBe(0);
  const report = JSON.parse(result.stdout.trim().split('\n').pop()!) as { swaps: number; junk: number };
  const temps = await findTemps(area.area);
  const outsideAfter = await treeDigest(area.outside, { exclude: join(area.outside, 'ctl') });
  console.log(
    `race (${DURATION_MS} ms): ${report.swaps} swaps; provider outside reads ${outsideReads}; ` +
      `outside tree ${outsideAfter === outsideBefore ? 'unchanged' : 'CHANGED'}; stray temps ${temps.length}; ` +
      `naive read-by-name control leaked ${naiveOutsideReads}\n` +
      Object.entries(counts)
        .sort()
        .map(([k, v]) => `  ${k}: ${v}`)
        .join('\n'),
  );

  expect(outsideReads).toBe(0);
  expect(counts['read-fresh:other-content'] ?? 0).toBe(0);
  expect(counts['read-stale:other-content'] ?? 0).toBe(0);
  expect(outsideAfter).toBe(outsideBefore);
  expect(temps).toEqual([]);
  expect(Object.keys(counts).filter((k) => k.endsWith('raw-error'))).toEqual([]);
  // The race was real: the swapper ran, and the provider met both states of the path.
  expect(report.swaps).toBeGreaterThan(50);
  expect(counts['read-fresh:inside'] ?? 0).toBeGreaterThan(0);
  expect((counts['read-fresh:FS_OUTSIDE_ROOT'] ?? 0) + (counts['read-stale:FS_OUTSIDE_ROOT'] ?? 0)).toBeGreaterThan(0);
  expect((counts['write-fresh:FS_OUTSIDE_ROOT'] ?? 0) + (counts['write-stale:FS_OUTSIDE_ROOT'] ?? 0)).toBeGreaterThan(0);
}, 60_000);
