import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { makeArea, type Area } from './helpers.js';

// A regular file swapped for a FIFO between the provider's check and its open: the FIFO must
// never be opened. Opening a FIFO for reading without blocking succeeds silently, so a watcher
// process counts the opens: its blocking open for writing returns exactly when a reader opened it.

const RUN_MS = Number(process.env.DSH_FS_RACE_MS ?? 2500);

/** Writes one line per reader that opened the FIFO `path` (the write end opens when one does). */
const WATCHER = `
const fs = require('node:fs');
for (;;) {
  const fd = fs.openSync(process.argv[1], fs.constants.O_WRONLY);
  fs.writeSync(1, 'open\\n');
  fs.closeSync(fd);
}`;

/** Puts the regular file and the FIFO (both hard links, so the FIFO stays one inode) at `target` in turn. */
const SWAPPER = `
const fs = require('node:fs');
const [file, fifo, target] = process.argv.slice(1);
const end = Date.now() + Number(process.argv[4]);
let n = 0;
while (Date.now() < end) {
  const from = n++ % 2 === 0 ? file : fifo;
  const tmp = target + '.swap';
  try { fs.unlinkSync(tmp); } catch {}
  fs.linkSync(from, tmp);
  fs.renameSync(tmp, target);
}
process.stdout.write(String(n));`;

describe('a file swapped for a FIFO between check and open', () => {
  let area: Area;
  const children: ChildProcess[] = [];
  beforeEach(async () => {
    area = await makeArea('special');
  });
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await area.cleanup();
  });

  test.runIf(process.platform === 'linux')('is never opened (proc anchoring), and every read is the file or FS_NOT_REGULAR_FILE', async () => {
    const keep = join(area.area, 'keep');
    await fsp.mkdir(keep);
    const file = join(keep, 'file');
    const fifo = join(keep, 'fifo');
    await fsp.writeFile(file, 'regular\n');
    execFileSync('mkfifo', [fifo]);
    const target = join(area.root, 'x.txt');
    await fsp.link(file, target);

    const watcher = spawn(process.execPath, ['-e', WATCHER, fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(watcher);
    let opens = 0;
    watcher.stdout.setEncoding('utf8').on('data', (d: string) => (opens += d.split('\n').length - 1));
    const swapper = spawn(process.execPath, ['-e', SWAPPER, file, fifo, target, String(RUN_MS)], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(swapper);
    let swaps = '';
    swapper.stdout.setEncoding('utf8').on('data', (d: string) => (swaps += d));
    const swapped = new Promise<void>((done) => swapper.on('close', () => done()));

    const fs = createLocalFs({ root: area.root, anchoring: 'proc' });
    expect(fs.provider.anchoring).toBe('proc');
    const t = await fs.resolve('x.txt');
    const outcomes = new Map<string, number>();
    let running = true;
    void swapped.then(() => (running = false));
    while (running) {
      for (const op of [() => fs.readText(t), () => fs.stat(t), () => fs.readBytes(t, { maxBytes: 100 })]) {
        const outcome = await op().then(
          () => 'ok',
          (e: { code?: string; message?: string }) => (e.code === 'FS_IO_ERROR' ? `${e.code} ${e.message?.replace(/\S*x\.txt\S*/g, 'X')}` : (e.code ?? 'raw')),
        );
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    }
    // Give the watcher a moment to report an open that happened at the very end.
    await new Promise((r) => setTimeout(r, 200));
    const attempts = [...outcomes.values()].reduce((a, b) => a + b, 0);
    console.log(`special-file race: ${attempts} reads (${JSON.stringify(Object.fromEntries(outcomes))}), ${swaps} swaps, ${opens} opens of the FIFO`);
    // The swaps change the file's link count, hence its ctime, while it is read: "kept changing" is a fair answer.
    const allowed = (k: string) => ['ok', 'FS_NOT_REGULAR_FILE', 'FS_NOT_FOUND'].includes(k) || /^FS_IO_ERROR .*kept changing/.test(k);
    expect([...outcomes.keys()].filter((k) => !allowed(k))).toEqual([]);
    expect(outcomes.get('FS_NOT_REGULAR_FILE') ?? 0).toBeGreaterThan(0);
    expect(opens).toBe(0);
  }, 60_000);
});
