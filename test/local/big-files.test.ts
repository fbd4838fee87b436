import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createLocalFs, type LocalFileSystem } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { makeArea, type Area } from './helpers.js';
import { codeOf } from '../support/code-of.js';

// A sparse file past 2 GiB: reading it into one buffer is what used to abort the process
// (`args[3]->IsInt32()`). Every call below must answer from the size alone, or stream.
const HUGE = 2 * 1024 ** 3 + 4096;

let area: Area;
let fs: LocalFileSystem;

beforeEach(async () => {
  area = await makeArea('big');
  await fsp.writeFile(join(area.root, 'huge.bin'), '');
  await fsp.truncate(join(area.root, 'huge.bin'), HUGE);
  fs = createLocalFs({ root: area.root });
});
afterEach(() => area.cleanup());

test('whole-file text calls on a file past 2 GiB are FS_TOO_LARGE from its size, and it is left as it was', async () => {
  const t = await fs.resolve('huge.bin');
  expect(await codeOf(fs.readText(t))).toBe('FS_TOO_LARGE');
  expect(await codeOf(fs.streamText(t))).toBe('FS_TOO_LARGE');
  expect(await codeOf(fs.readBytes(t, { maxBytes: 1024 }))).toBe('FS_TOO_LARGE');
  // writeText and editText stream such a file instead (test/local/huge-text.test.ts); a guard
  // that cannot hold is answered before anything is read.
  expect(await codeOf(fs.writeText(t, 'small', { kind: 'createIfAbsent' }))).toBe('FS_NOT_OBSERVED');
  const s = await fs.streamBytes(t, { start: HUGE - 10, unversioned: true });
  let n = 0;
  for await (const c of s.chunks) n += c.byteLength;
  expect([s.size, n]).toEqual([HUGE, 10]);
  expect((await fsp.stat(join(area.root, 'huge.bin'))).size).toBe(HUGE);
});

test('a blind writeBytes or remove over a file past 2 GiB never reads it', async () => {
  const t = await fs.resolve('huge.bin');
  const out = await fs.writeBytes(t, new TextEncoder().encode('replaced'));
  expect(out.operation).toBe('update');
  expect(await fsp.readFile(join(area.root, 'huge.bin'), 'utf8')).toBe('replaced');
  await fsp.truncate(join(area.root, 'huge.bin'), HUGE);
  await fs.remove(t);
  expect(await fsp.readdir(area.root)).toEqual([]);
});

test('through an overlay, text calls on a lower file past 2 GiB are refused from its size', async () => {
  const overlay = await createOverlayFs({ lower: fs });
  const t = await overlay.resolve('huge.bin');
  expect(await codeOf(overlay.readText(t))).toBe('FS_TOO_LARGE');
  expect(await codeOf(overlay.writeText(t, 'small', { kind: 'createIfAbsent' }))).toBe('FS_NOT_OBSERVED');
  expect((await fsp.stat(join(area.root, 'huge.bin'))).size).toBe(HUGE);
});
