import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { makeArea, type Area } from './helpers.js';

// A machine that refuses threads (every worker fails to start), then workers that die on their
// first request. The bulk reads then answer nothing (each file is read by itself), never hang,
// and grep finds what it finds without them.
const mode = vi.hoisted(() => ({ workers: 'refused' as 'refused' | 'dying' }));
vi.mock('node:worker_threads', async (original) => {
  const real = await original<typeof import('node:worker_threads')>();
  class Failing extends real.Worker {
    readonly #ours: boolean;
    constructor(source: string | URL, options?: import('node:worker_threads').WorkerOptions) {
      const ours = options?.name === 'dsh-fs search reads';
      if (ours && mode.workers === 'refused') throw Object.assign(new Error('thread creation refused'), { code: 'ERR_WORKER_INIT_FAILED' });
      super(source, options);
      this.#ours = ours;
    }
    override postMessage(value: unknown, transfer?: readonly import('node:worker_threads').TransferListItem[]): void {
      if (this.#ours) void this.terminate();
      else super.postMessage(value, transfer);
    }
  }
  return { ...real, Worker: Failing };
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

// A hang (a request waiting for a worker that never came) fails at each test's limit rather than at the suite's.
it('answers nothing when no worker starts, request after request, and grep still finds every match', async () => {
  const fs = createLocalFs({ root: area.root, searchThreads: 2 });
  const targets = await answersNothing(fs);
  // The calling thread's own reads (a request under 64 files) do not need a worker.
  expect((await fs.searchReads!(targets.slice(0, 10), { maxBytes: 1024, maxTotalBytes: 1 << 20 })).every((a) => a instanceof Uint8Array)).toBe(true);
}, 20_000);

it('answers nothing from workers that end while reading, and grep still finds every match', async () => {
  mode.workers = 'dying';
  await answersNothing(createLocalFs({ root: area.root, searchThreads: 2 }));
}, 20_000);
