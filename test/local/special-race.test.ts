import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createLocalFs, type LocalFileSystem, type LocalProviderOptions } from '../../src/backends/local/index.js';
import type { FsTarget } from '../../src/seam/index.js';
import { makeArea, type Area } from './helpers.js';

// A regular file swapped for a FIFO between the provider's check and its open. docs/local.md
// promises: with /proc anchoring the FIFO is never opened at all; without it (inode anchoring) it
// may be opened, never by a blocking call, and is refused by the descriptor's type before any byte
// is read. Two measures, each exact for its claim:
// - a watcher process whose blocking open for writing returns only when a reader opened the FIFO
//   (one such return is proof of an opening; no instrumentation, so every read path is covered);
// - the provider's own I/O, instrumented: each open that is not O_PATH is fstat'ed, and each
//   read from a FIFO descriptor is counted, per read operation.

const RUN_MS = Number(process.env.DSH_FS_RACE_MS ?? 2500);
const O_PATH = 0o10000000;

/** Writes one line per return of a blocking open for writing of the FIFO `path`. */
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

/** What the provider did to the FIFO: opens for I/O, and attempts to read from such a descriptor. */
interface FifoUse {
  opened: number;
  reads: number;
}

/** fs.promises with every FIFO opened for I/O, and every read from one, counted into `use`. */
function instrumentedIo(use: FifoUse): LocalProviderOptions['io'] {
  const open = async (...args: Parameters<typeof fsp.open>): Promise<FileHandle> => {
    const handle = await fsp.open(...args);
    const flags = args[1];
    if (typeof flags === 'number' && (flags & O_PATH) !== 0) return handle; // pins, opens nothing
    if (!(await handle.stat()).isFIFO()) return handle;
    use.opened++;
    // Counted when called, whatever it returns or throws (0 bytes, EAGAIN, ESPIPE): the claim is
    // that the type is refused before any read is attempted.
    for (const method of ['read', 'readv', 'readFile', 'readLines', 'createReadStream'] as const) {
      const original = (handle[method] as (...a: unknown[]) => unknown).bind(handle);
      Object.assign(handle, {
        [method]: (...a: unknown[]) => {
          use.reads++;
          return original(...a);
        },
      });
    }
    return handle;
  };
  return { ...fsp, open: open as typeof fsp.open };
}

describe('a file swapped for a FIFO between check and open', () => {
  let area: Area;
  let target: string;
  let fifo: string;
  const children: ChildProcess[] = [];
  beforeEach(async () => {
    area = await makeArea('special');
    const keep = join(area.area, 'keep');
    await fsp.mkdir(keep);
    const file = join(keep, 'file');
    fifo = join(keep, 'fifo');
    await fsp.writeFile(file, 'regular\n');
    if (process.platform === 'linux') execFileSync('mkfifo', [fifo]);
    target = join(area.root, 'x.txt');
    await fsp.link(file, target);
  });
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await area.cleanup();
  });

  /** Runs the swapper for RUN_MS while `each` reads; returns the outcomes by kind. */
  async function race(fs: LocalFileSystem, each: (op: () => Promise<unknown>) => Promise<string>): Promise<{ outcomes: Map<string, number>; swaps: string }> {
    const file = join(area.area, 'keep', 'file');
    const swapper = spawn(process.execPath, ['-e', SWAPPER, file, fifo, target, String(RUN_MS)], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(swapper);
    let swaps = '';
    swapper.stdout.setEncoding('utf8').on('data', (d: string) => (swaps += d));
    let running = true;
    swapper.on('close', () => (running = false));
    const t: FsTarget = await fs.resolve('x.txt');
    const ops = [() => fs.readText(t), () => fs.stat(t), () => fs.readBytes(t, { maxBytes: 100 }), () => fs.streamText(t, { unversioned: true })];
    const outcomes = new Map<string, number>();
    while (running) {
      for (const op of ops) {
        const outcome = await each(op);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    }
    return { outcomes, swaps };
  }

  const settle = (op: () => Promise<unknown>) =>
    op().then(
      (r) => (typeof r === 'object' && r !== null && 'text' in r && r.text !== 'regular\n' ? 'wrong content' : 'ok'),
      (e: { code?: string; message?: string }) => (e.code === 'FS_IO_ERROR' ? `${e.code} ${e.message?.replace(/\S*x\.txt\S*/g, 'X')}` : (e.code ?? 'raw')),
    );

  const expectAllowed = (outcomes: Map<string, number>) => {
    // The swaps change the file's link count, hence its ctime, while it is read: "kept changing" is a fair answer.
    const allowed = (k: string) => ['ok', 'FS_NOT_REGULAR_FILE', 'FS_NOT_FOUND'].includes(k) || /^FS_IO_ERROR .*kept changing/.test(k);
    expect([...outcomes.keys()].filter((k) => !allowed(k))).toEqual([]);
    expect(outcomes.get('FS_NOT_REGULAR_FILE') ?? 0).toBeGreaterThan(0);
  };

  test.runIf(process.platform === 'linux')('proc anchoring: a watcher sees no opening at all, on every read path', async () => {
    const watcher = spawn(process.execPath, ['-e', WATCHER, fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(watcher);
    let opens = 0;
    watcher.stdout.setEncoding('utf8').on('data', (d: string) => (opens += d.split('\n').length - 1));
    // No injected io: the synchronous small-file read of searches (streamText unversioned) runs too.
    const fs = createLocalFs({ root: area.root, anchoring: 'proc' });
    expect(fs.provider.anchoring).toBe('proc');
    const { outcomes, swaps } = await race(fs, settle);
    // A watcher return for an opening at the very end still arrives.
    await new Promise((r) => setTimeout(r, 200));
    const attempts = [...outcomes.values()].reduce((a, b) => a + b, 0);
    console.log(`special-file race (proc, watched): ${attempts} reads (${JSON.stringify(Object.fromEntries(outcomes))}), ${swaps} swaps, ${opens} watcher returns`);
    expect(opens).toBe(0);
    expectAllowed(outcomes);
  }, 60_000);

  for (const anchoring of ['proc', 'inode'] as const) {
    test.runIf(process.platform === 'linux')(
      `${anchoring} anchoring: ${anchoring === 'proc' ? 'no read opens the FIFO' : 'a read may open the FIFO, never blocking, and reads no byte of it'} (instrumented)`,
      async () => {
        const use: FifoUse = { opened: 0, reads: 0 };
        const fs = createLocalFs({ root: area.root, anchoring, io: instrumentedIo(use) });
        let readsThatOpened = 0;
        let readsThatRead = 0;
        const { outcomes, swaps } = await race(fs, async (op) => {
          const before = { ...use };
          const outcome = await settle(op);
          if (use.opened > before.opened) readsThatOpened++;
          if (use.reads > before.reads) readsThatRead++;
          return outcome;
        });
        const attempts = [...outcomes.values()].reduce((a, b) => a + b, 0);
        console.log(
          `special-file race (${anchoring}, instrumented): ${attempts} reads (${JSON.stringify(Object.fromEntries(outcomes))}), ${swaps} swaps; ` +
            `${readsThatOpened} reads opened the FIFO, ${readsThatRead} tried to read from it`,
        );
        // Refused by the descriptor's type before any byte is read, in both modes.
        expect(readsThatRead).toBe(0);
        expectAllowed(outcomes);
        // Not opened at all: the documented promise of /proc anchoring only.
        if (anchoring === 'proc') expect(readsThatOpened).toBe(0);
      },
      60_000,
    );
  }
});
