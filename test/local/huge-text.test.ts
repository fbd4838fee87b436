import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type ToolResult } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { createLocalFs, type LocalFileSystem } from '../../src/backends/local/index.js';
import { grep } from '../../src/search/grep.js';
import { fsTools, type EditValue, type ReadValue } from '../../src/tools/index.js';
import { makeArea, type Area } from './helpers.js';

// One real text file over 2 GiB, written once and shared by the cases (V7): windows, an edit
// and a grep, each in memory bounded by a window and a chunk, never by the file.
const LINE = 64; // bytes per line, break included
const BLOCK = 64 * 1024 * 1024;
const BLOCKS = 33; // 2.06 GiB
const LINES = (BLOCKS * BLOCK) / LINE;
const MIDDLE = Math.floor(LINES / 2) + 7;
const PER_BLOCK = BLOCK / LINE;
/** Line `n` (1-based) of the file, but for the marker. */
const filler = (n: number) => `filler line ${String((n - 1) % PER_BLOCK).padStart(7, '0')} `.padEnd(LINE - 1, '.') + '\n';
const MARKER = 'UNIQUE MARKER IN THE MIDDLE '.padEnd(LINE - 1, '#') + '\n';
const PEAK_BOUND = 64 * 1024 * 1024;

let area: Area;
let file: string;
let fs: LocalFileSystem;
let tools: {
  read(extra: object): Promise<ToolResult<ReadValue>>;
  edit(oldString: string, newString: string): Promise<ToolResult<EditValue>>;
};

/** Peak growth of rss and arrayBuffers over a baseline while `fn` runs, sampled every 10 ms. */
async function peakOf<T>(fn: () => Promise<T>): Promise<{ value: T; rss: number; arrayBuffers: number }> {
  const base = process.memoryUsage();
  let rss = 0;
  let arrayBuffers = 0;
  const sample = () => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss - base.rss);
    arrayBuffers = Math.max(arrayBuffers, m.arrayBuffers - base.arrayBuffers);
  };
  const timer = setInterval(sample, 10);
  try {
    const value = await fn();
    sample();
    return { value, rss, arrayBuffers };
  } finally {
    clearInterval(timer);
  }
}

beforeAll(async () => {
  area = await makeArea('huge');
  file = join(area.root, 'huge.txt');
  // Large writes of one prepared block: the file is on disk in a few seconds.
  const block = Buffer.from(Array.from({ length: PER_BLOCK }, (_, i) => filler(i + 1)).join(''));
  const handle = await fsp.open(file, 'w');
  try {
    for (let b = 0; b < BLOCKS; b++) {
      const first = (b * BLOCK) / LINE + 1;
      if (MIDDLE >= first && MIDDLE < first + BLOCK / LINE) {
        const copy = Buffer.from(block);
        copy.write(MARKER, (MIDDLE - first) * LINE);
        await handle.write(copy);
      } else await handle.write(block);
    }
  } finally {
    await handle.close();
  }
  fs = createLocalFs({ root: area.root });
  const ctx = createHarness({ fs, cwd: area.root, plugins: [createObservationPolicy(), fsTools()] });
  tools = {
    read: (extra) => ctx.tools.execute('read', { file_path: file, ...extra }, { owner: 'a' }) as Promise<ToolResult<ReadValue>>,
    edit: (old_string, new_string) => ctx.tools.execute('edit', { file_path: file, old_string, new_string }, { owner: 'a' }) as Promise<ToolResult<EditValue>>,
  };
}, 120_000);

afterAll(() => area?.cleanup());

describe('a text file over 2 GiB on local (V7)', () => {
  it('reads windows at the start, middle and end, in bounded memory', async () => {
    expect((await fsp.stat(file)).size).toBeGreaterThan(2 * 1024 ** 3);
    const start = await peakOf(() => tools.read({ limit: 3 }));
    expect(!start.value.isError && start.value.value.lines.map((l) => l.number)).toEqual([1, 2, 3]);
    expect(!start.value.isError && start.value.text).toContain('of at least');
    const middle = await peakOf(() => tools.read({ offset: MIDDLE - 1, limit: 3 }));
    expect(!middle.value.isError && middle.value.value.lines.map((l) => l.text)).toEqual([filler(MIDDLE - 1).trim(), MARKER.trim(), filler(MIDDLE + 1).trim()]);
    const end = await peakOf(() => tools.read({ offset: LINES - 1 }));
    expect(!end.value.isError && end.value.value.lines.map((l) => l.number)).toEqual([LINES - 1, LINES]);
    expect(!end.value.isError && end.value.text).toContain(`End of file - total ${LINES} lines`);
    for (const m of [start, middle, end]) {
      expect(m.arrayBuffers).toBeLessThan(PEAK_BOUND);
      expect(m.rss).toBeLessThan(PEAK_BOUND);
    }
  }, 120_000);

  it('greps it line by line in bounded memory', async () => {
    const found = await peakOf(() => grep(fs, 'UNIQUE MARKER', { path: file, maxFileBytes: 4 * 1024 ** 3 }));
    expect(found.value.matches.map((m) => m.line)).toEqual([MIDDLE]);
    expect(found.arrayBuffers).toBeLessThan(PEAK_BOUND);
    expect(found.rss).toBeLessThan(PEAK_BOUND);
  }, 120_000);

  it('edits it uniquely in the middle in one pass, in bounded memory', async () => {
    const edited = await peakOf(() => tools.edit('UNIQUE MARKER IN THE MIDDLE', 'EDITED'));
    expect(edited.value.isError ? edited.value.error : undefined).toBeUndefined();
    expect(!edited.value.isError && edited.value.value.lines).toEqual([{ start: MIDDLE, end: MIDDLE }]);
    expect(edited.arrayBuffers).toBeLessThan(PEAK_BOUND);
    expect(edited.rss).toBeLessThan(PEAK_BOUND);
    const handle = await fsp.open(file, 'r');
    try {
      const buf = Buffer.alloc(LINE * 3 - ('UNIQUE MARKER IN THE MIDDLE'.length - 'EDITED'.length));
      await handle.read(buf, 0, buf.length, (MIDDLE - 2) * LINE);
      expect(buf.toString()).toBe(filler(MIDDLE - 1) + MARKER.replace('UNIQUE MARKER IN THE MIDDLE', 'EDITED') + filler(MIDDLE + 1));
    } finally {
      await handle.close();
    }
    expect((await fsp.stat(file)).size).toBe(BLOCKS * BLOCK - 'UNIQUE MARKER IN THE MIDDLE'.length + 'EDITED'.length);
  }, 120_000);
});
