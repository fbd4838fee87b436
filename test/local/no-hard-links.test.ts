import { promises as nodeFsp } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { FsError } from '../../src/seam/index.js';
import { makeArea, type Area } from './helpers.js';

// A filesystem without hard links (a FUSE mount, FAT) answers link(2) with EPERM: new files are
// then published by rename, and a create that may not replace still never replaces.
const noLinks = {
  ...nodeFsp,
  link: async (_from: string, to: string) => {
    throw Object.assign(new Error(`EPERM: operation not permitted, link '${to}'`), { code: 'EPERM', errno: -1, syscall: 'link' });
  },
} as typeof nodeFsp;

let area: Area;
beforeAll(async () => {
  area = await makeArea('no-links');
});
afterAll(async () => {
  await area.cleanup();
});

test('without hard links: creates, createIfAbsent over a file is refused, replaces keep working', async () => {
  const fs = createLocalFs({ root: area.root, io: noLinks });
  const target = await fs.resolve('a/new.txt');
  expect((await fs.writeText(target, 'one\n', { kind: 'createIfAbsent' })).operation).toBe('create');
  await expect(fs.writeText(target, 'two\n', { kind: 'createIfAbsent' })).rejects.toBeInstanceOf(FsError);
  expect((await fs.readText(target)).text).toBe('one\n');
  const bytes = await fs.writeBytes(await fs.resolve('b.bin'), new Uint8Array([1, 2]));
  expect(bytes.operation).toBe('create');
  expect((await fs.writeBytes(await fs.resolve('b.bin'), new Uint8Array([3]))).operation).toBe('update');
  expect(await nodeFsp.readFile(`${area.root}/b.bin`)).toEqual(Buffer.from([3]));
  // No temp file is left behind by any of it.
  expect((await nodeFsp.readdir(area.root)).sort()).toEqual(['a', 'b.bin']);
  expect(await nodeFsp.readdir(`${area.root}/a`)).toEqual(['new.txt']);
});
