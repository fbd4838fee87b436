import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { makeArea, type Area } from './helpers.js';

// streamBytes over local reads one chunk ahead; with `reuse` two buffers take turns. The bytes
// are the file's either way, and a stream let go early closes its descriptor.
const MiB = 1024 * 1024;
let area: Area;
beforeAll(async () => {
  area = await makeArea('stream-ahead');
});
afterAll(async () => {
  await area.cleanup();
});

describe('local streamed reads, one chunk ahead', () => {
  for (const size of [0, 1, MiB - 1, MiB, MiB + 1, 3 * MiB + 12345]) {
    it(`gives a file of ${size} bytes whole, with and without reuse (copied at once when reused)`, async () => {
      const bytes = randomBytes(size);
      await fsp.writeFile(join(area.root, 'f.bin'), bytes);
      const fs = createLocalFs({ root: area.root });
      const target = await fs.resolve(join(area.root, 'f.bin'));
      for (const start of [0, Math.floor(size / 2)]) {
        const kept: Uint8Array[] = [];
        for await (const c of (await fs.streamBytes(target, { start })).chunks) kept.push(c);
        const copied: Uint8Array[] = [];
        for await (const c of (await fs.streamBytes(target, { start, reuse: true })).chunks) copied.push(Uint8Array.from(c));
        expect(Buffer.concat(kept).equals(bytes.subarray(start))).toBe(true);
        expect(Buffer.concat(copied).equals(bytes.subarray(start))).toBe(true);
      }
    });
  }

  it('a chunk kept without reuse stays intact while later ones are read; a reused one is overwritten', async () => {
    const bytes = randomBytes(4 * MiB);
    await fsp.writeFile(join(area.root, 'g.bin'), bytes);
    const fs = createLocalFs({ root: area.root });
    const target = await fs.resolve(join(area.root, 'g.bin'));
    const read = async (reuse: boolean) => {
      const held: Uint8Array[] = [];
      for await (const c of (await fs.streamBytes(target, { reuse })).chunks) held.push(c);
      return held.map((c, i) => Buffer.from(c).equals(bytes.subarray(i * MiB, (i + 1) * MiB)));
    };
    expect(await read(false)).toEqual([true, true, true, true]);
    // Two buffers take turns: only the last two chunks still hold their bytes.
    expect(await read(true)).toEqual([false, false, true, true]);
  });

  it('a stream let go after a chunk leaves no read going and the file can be replaced', async () => {
    await fsp.writeFile(join(area.root, 'h.bin'), randomBytes(5 * MiB));
    const fs = createLocalFs({ root: area.root });
    const target = await fs.resolve(join(area.root, 'h.bin'));
    for (const reuse of [false, true]) {
      let n = 0;
      for await (const _ of (await fs.streamBytes(target, { reuse })).chunks) if (++n === 2) break;
      expect(n).toBe(2);
    }
    await fsp.rm(join(area.root, 'h.bin'));
    await expect(fsp.stat(join(area.root, 'h.bin'))).rejects.toThrow();
  });
});
