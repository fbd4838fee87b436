import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createLocalFs, type LocalFileSystem } from '../../src/backends/local/index.js';
import { makeArea, type Area } from './helpers.js';

// Unversioned stats and small reads hold their parent directory across calls; a parent moved out
// of the root (or swapped for a link) between two calls must answer as a fresh open would.
let area: Area;
let fs: LocalFileSystem;

beforeEach(async () => {
  area = await makeArea('held-parent');
  fs = createLocalFs({ root: area.root });
  mkdirSync(join(area.root, 'a'));
  writeFileSync(join(area.root, 'a', 'f.txt'), 'inside\n');
});
afterEach(async () => {
  await area.cleanup();
});

test('a held parent moved out of the root is not used again (stat and read)', async () => {
  const t = await fs.resolve('a/f.txt');
  expect((await fs.stat(t, { versioned: false }))?.type).toBe('file');
  // Same turn of the event loop: the parent is still held.
  renameSync(join(area.root, 'a'), join(area.outside, 'a'));
  expect(await fs.stat(t, { versioned: false })).toBeUndefined();
  expect((await fs.readBytes(t, { maxBytes: 1024, unversioned: true }).catch((e: { code: string }) => e.code))).toBe('FS_NOT_FOUND');
});

test('a held parent swapped for a link out of the root is refused (stat and read)', async () => {
  const t = await fs.resolve('a/f.txt');
  expect((await fs.stat(t, { versioned: false }))?.type).toBe('file');
  renameSync(join(area.root, 'a'), join(area.outside, 'a'));
  symlinkSync(join(area.outside, 'a'), join(area.root, 'a'));
  const stat = await fs.stat(t, { versioned: false }).then((s) => s?.type ?? 'absent', (e: { code: string }) => e.code);
  expect(stat).not.toBe('file');
  const read = await fs.readBytes(t, { maxBytes: 1024, unversioned: true }).then(() => 'read', (e: { code: string }) => e.code);
  expect(read).not.toBe('read');
});
