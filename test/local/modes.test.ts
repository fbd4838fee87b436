import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { makeArea, type Area } from './helpers.js';

let area: Area;

beforeAll(async () => {
  area = await makeArea('modes');
});

afterAll(async () => {
  await area.cleanup();
});

test('setExecutable changes only the x bits, as chmod +x and -x do: each read bit gives its execute bit', async () => {
  const fs = createLocalFs({ root: area.root });
  let n = 0;
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 0o777 }), async (start) => {
      const path = join(area.root, `m${n++}.sh`);
      await fsp.writeFile(path, 'echo hi\n');
      await fsp.chmod(path, start | 0o600); // the owner must be able to read it back
      const mode = start | 0o600;
      const target = await fs.resolve(path);
      await fs.setExecutable!(target, true);
      expect((await fsp.stat(path)).mode & 0o777).toBe(mode | ((mode & 0o444) >> 2));
      expect((await fs.stat(target))?.executable).toBe(true);
      await fs.setExecutable!(target, false);
      expect((await fsp.stat(path)).mode & 0o777).toBe(mode & ~0o111);
      expect((await fs.stat(target))?.executable).toBe(false);
    }),
    { numRuns: 30 },
  );
});

test('a write keeps the mode, and a file made executable behind the seam shows as such', async () => {
  const fs = createLocalFs({ root: area.root });
  const path = join(area.root, 'tool.sh');
  await fsp.writeFile(path, '#!/bin/sh\r\necho one\r\n');
  await fsp.chmod(path, 0o750);
  const target = await fs.resolve(path);
  expect((await fs.listDir(await fs.resolve(area.root))).find((e) => e.name === 'tool.sh')?.executable).toBe(true);
  await fs.writeText(target, '#!/bin/sh\necho two\n');
  expect((await fsp.stat(path)).mode & 0o777).toBe(0o750);
  expect(await fsp.readFile(path, 'utf8')).toBe('#!/bin/sh\r\necho two\r\n');
});

test('setExecutable does not follow a link out of the root', async () => {
  const fs = createLocalFs({ root: area.root });
  const outsideFile = join(area.outside, 'secret.sh');
  await fsp.writeFile(outsideFile, 'x\n', { mode: 0o644 });
  await fsp.symlink(outsideFile, join(area.root, 'out.sh'));
  await expect(fs.resolve(join(area.root, 'out.sh'))).rejects.toMatchObject({ code: 'FS_OUTSIDE_ROOT' });
  expect((await fsp.stat(outsideFile)).mode & 0o777).toBe(0o644);
});

test('a link to outside the root can be made and read, but nothing resolves through it', async () => {
  const fs = createLocalFs({ root: area.root });
  const outsideFile = join(area.outside, 'target.txt');
  await fsp.writeFile(outsideFile, 'outside\n');
  const at = await fs.resolve(join(area.root, 'escape'), { noFollow: true });
  await fs.symlink!(at, outsideFile);
  expect(await fsp.readlink(join(area.root, 'escape'))).toBe(outsideFile);
  expect(await fs.readlink!(at)).toBe(outsideFile);
  await expect(fs.resolve(join(area.root, 'escape'))).rejects.toMatchObject({ code: 'FS_OUTSIDE_ROOT' });
  // A link made through a parent link that leaves the root is refused: the parent is resolved first.
  await fsp.symlink(area.outside, join(area.root, 'outdir'));
  await expect(fs.resolve(join(area.root, 'outdir/planted'), { noFollow: true })).rejects.toMatchObject({ code: 'FS_OUTSIDE_ROOT' });
  expect(await fsp.readdir(area.outside)).not.toContain('planted');
  expect(await fsp.readFile(outsideFile, 'utf8')).toBe('outside\n');
});
