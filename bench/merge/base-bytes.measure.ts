// What keeping the base content costs a first copy-up: the one added read of the lower file
// (when the new content's size differs), against the copy-up writes themselves, side by side and
// alternating. Run by hand: npx vitest run --config bench/merge/vitest.config.ts base-bytes
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';

const FILES = 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

it('a first copy-up of 1,000 files of ~1 KiB: the writes, and the added read of the lower', async () => {
  const root = await mkdtemp(join(tmpdir(), 'dsh-base-bytes-'));
  await mkdir(join(root, 'src'));
  for (let i = 0; i < FILES; i++) await writeFile(join(root, 'src', `f${i}.txt`), `${'x'.repeat(1000)} ${i}\n`);
  const lower = createLocalFs({ root });
  const writes: number[] = [];
  const reads: number[] = [];
  try {
    for (let round = 0; round < 5; round++) {
      const fs = await createOverlayFs({ lower });
      const targets = await Promise.all(Array.from({ length: FILES }, (_, i) => fs.resolve(`src/f${i}.txt`)));
      for (const what of round % 2 === 0 ? ['write', 'read'] : ['read', 'write']) {
        const t = performance.now();
        if (what === 'write') for (const target of targets) await fs.writeBytes(target, Buffer.from(`changed ${round}\n`));
        else for (const target of targets) await lower.readBytes(target, { maxBytes: 1 << 20 });
        (what === 'write' ? writes : reads).push(performance.now() - t);
      }
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
  console.log(`copy-up writes ms: ${fmt(writes)} (median ${median(writes).toFixed(0)})\nlower reads ms: ${fmt(reads)} (median ${median(reads).toFixed(0)})`);
});
