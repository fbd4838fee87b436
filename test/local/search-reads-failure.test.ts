import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeArea, type Area } from './helpers.js';

// A machine that refuses threads or processes (every helper fails to start), then helpers that
// die on their first request. The bulk reads then answer nothing (each file is read by itself),
// never hang, and grep finds what it finds without them.
const mode = vi.hoisted(() => ({ helpers: 'refused' as 'refused' | 'dying' | 'no processes' | 'no node' }));
vi.mock('node:worker_threads', async (original) => {
  const real = await original<typeof import('node:worker_threads')>();
  class Failing extends real.Worker {
    readonly #ours: boolean;
    constructor(source: string | URL, options?: import('node:worker_threads').WorkerOptions) {
      const ours = options?.name === 'dsh-fs search reads';
      if (ours && mode.helpers === 'refused') throw Object.assign(new Error('thread creation refused'), { code: 'ERR_WORKER_INIT_FAILED' });
      super(source, options);
      this.#ours = ours;
    }
    override postMessage(value: unknown, transfer?: readonly import('node:worker_threads').TransferListItem[]): void {
      if (this.#ours && mode.helpers === 'dying') void this.terminate();
      else super.postMessage(value, transfer);
    }
  }
  return { ...real, Worker: Failing };
});
vi.mock('node:child_process', async (original) => {
  const real = await original<typeof import('node:child_process')>();
  const spawn = ((command: string, args: readonly string[], options: import('node:child_process').SpawnOptions) => {
    if (command !== process.execPath) return real.spawn(command, args, options);
    if (mode.helpers === 'refused' || mode.helpers === 'no processes') throw Object.assign(new Error('spawn refused'), { code: 'EAGAIN' });
    // Refused later, by an 'error' event.
    if (mode.helpers === 'no node') return real.spawn('/nonexistent/node', args, options);
    // A helper that ends at once, with requests sent or on their way.
    return real.spawn(command, ['-e', 'setTimeout(() => process.exit(3), 50)'], options);
  }) as typeof real.spawn;
  return { ...real, spawn };
});
const { createLocalFs } = await import('../../src/backends/local/index.js');
const { grep } = await import('../../src/index.js');

let area: Area;
beforeAll(async () => {
  area = await makeArea('search-reads-failure');
  for (let i = 0; i < 300; i++) {
    mkdirSync(join(area.root, `d${i % 4}`), { recursive: true });
    writeFileSync(join(area.root, `d${i % 4}`, `f${i}.txt`), i % 7 === 0 ? `needle ${i}\n` : `other ${i}\n`);
  }
});
afterAll(async () => {
  await area.cleanup();
});

/** Asks four times for all 300 files: every answer is nothing, and grep still finds every match. */
async function answersNothing(fs: ReturnType<typeof createLocalFs>): Promise<Awaited<ReturnType<typeof fs.resolve>>[]> {
  const targets = await Promise.all(Array.from({ length: 300 }, (_, i) => fs.resolve(join(area.root, `d${i % 4}`, `f${i}.txt`))));
  // More requests than the pool has workers: none waits for a worker that never came.
  for (let round = 0; round < 4; round++) {
    const answers = await fs.searchReads!(targets, { maxBytes: 1024, maxTotalBytes: 1 << 20 });
    expect(answers.every((a) => a === undefined)).toBe(true);
  }
  const found = await grep(fs, 'needle', { path: area.root });
  expect(found.matches.length).toBe(Math.ceil(300 / 7));
  return targets;
}

it.each(['no processes', 'no node'] as const)('reads on threads where no helper process can be started (%s)', async (how) => {
  mode.helpers = how;
  // A pool of its own (pools are kept per kind and size): this one turns to threads.
  const fs = createLocalFs({ root: area.root, searchThreads: how === 'no node' ? 3 : 4, searchHelpers: 'processes' });
  const targets = await Promise.all(Array.from({ length: 300 }, (_, i) => fs.resolve(join(area.root, `d${i % 4}`, `f${i}.txt`))));
  // The first request may go to a process that was refused later; the next ones go to threads.
  const answers = [];
  for (let round = 0; round < 3; round++) answers.push(await fs.searchReads!(targets, { maxBytes: 1024, maxTotalBytes: 1 << 20 }));
  expect(answers[2]!.every((a) => a instanceof Uint8Array)).toBe(true);
}, 20_000);

// A hang (a request waiting for a helper that never came) fails at each test's limit rather than at the suite's.
describe.each(['threads', 'processes'] as const)('on %s', (kind) => {
  it('answers nothing when no helper starts, request after request, and grep still finds every match', async () => {
    mode.helpers = 'refused';
    const fs = createLocalFs({ root: area.root, searchThreads: 2, searchHelpers: kind });
    const targets = await answersNothing(fs);
    // The calling thread's own reads (a request under 64 files) do not need a helper.
    expect((await fs.searchReads!(targets.slice(0, 10), { maxBytes: 1024, maxTotalBytes: 1 << 20 })).every((a) => a instanceof Uint8Array)).toBe(true);
  }, 20_000);

  it('answers nothing from helpers that end while reading, and grep still finds every match', async () => {
    mode.helpers = 'dying';
    await answersNothing(createLocalFs({ root: area.root, searchThreads: 2, searchHelpers: kind }));
  }, 20_000);
});
