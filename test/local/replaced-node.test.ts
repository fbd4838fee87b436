import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createLocalFs, type LocalProviderOptions } from '../../src/backends/local/index.js';
import { FsError } from '../../src/seam/index.js';
import { makeArea, type Area } from './helpers.js';

// Over a path-based FUSE filesystem (libfuse 2, as a dsh-fs mount is), a node replaced by a rename
// loses its path: a descriptor the provider already holds on it (an O_PATH pin, or the file opened
// for reading) answers ENOENT, where a disk keeps the inode. Such a file was replaced, not removed:
// the provider looks the name up again. Here the ENOENT is injected on the handle's stat.

const O_PATH = 0o10000000;
type Where = 'pin' | 'open';

/** fs.promises whose next `failures.left` stats on a `where` handle answer ENOENT. */
function replacingIo(where: Where, failures: { left: number; injected: number }): LocalProviderOptions['io'] {
  const open = async (...args: Parameters<typeof fsp.open>): Promise<FileHandle> => {
    const handle = await fsp.open(...args);
    const flags = typeof args[1] === 'number' ? args[1] : 0;
    const isPin = (flags & O_PATH) !== 0;
    if (isPin !== (where === 'pin')) return handle;
    return new Proxy(handle, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop === 'stat' && failures.left > 0) {
          return async () => {
            failures.left--;
            failures.injected++;
            throw Object.assign(new Error('ENOENT: no such file or directory, fstat'), { code: 'ENOENT', errno: -2, syscall: 'fstat' });
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  return { ...fsp, open } as LocalProviderOptions['io'];
}

let area: Area;
beforeEach(async () => {
  area = await makeArea('replaced');
});
afterEach(() => area.cleanup());

describe.each<Where>(['pin', 'open'])('a held node answering ENOENT (%s) was replaced, not removed', (where) => {
  test('read looks the name up again and returns the file there', async () => {
    await fsp.writeFile(join(area.root, 'f.txt'), 'current\n');
    const failures = { left: 1, injected: 0 };
    const fs = await createLocalFs({ root: area.root, anchoring: 'proc', io: replacingIo(where, failures) });
    const t = await fs.resolve('f.txt');
    expect((await fs.readText(t)).text).toBe('current\n');
    expect(failures.injected).toBe(1);
  });

  test('a versioned stat and an unguarded edit do the same', async () => {
    await fsp.writeFile(join(area.root, 'f.txt'), 'a @1@ b\n');
    const failures = { left: 0, injected: 0 };
    const fs = await createLocalFs({ root: area.root, anchoring: 'proc', io: replacingIo(where, failures) });
    const t = await fs.resolve('f.txt');
    failures.left = 1;
    const info = await fs.stat(t);
    expect(info?.type === 'file' && typeof info.version === 'string').toBe(true);
    failures.left = 1;
    await fs.editText(t, { oldString: '@1@', newString: '#1#' });
    expect(await fsp.readFile(join(area.root, 'f.txt'), 'utf8')).toBe('a #1# b\n');
    expect(failures.injected).toBe(2);
  });

  test('a node that never stops answering ENOENT ends in FS_IO_ERROR, not in "not found"', async () => {
    await fsp.writeFile(join(area.root, 'f.txt'), 'x\n');
    const failures = { left: Number.MAX_SAFE_INTEGER, injected: 0 };
    const fs = await createLocalFs({ root: area.root, anchoring: 'proc', io: replacingIo(where, failures) });
    const err = await fs.readText(await fs.resolve('f.txt')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FsError);
    expect((err as FsError).code).toBe('FS_IO_ERROR');
    expect(failures.injected).toBeGreaterThan(1);
  });
});

test('a removed file is still "not found"', async () => {
  const failures = { left: 0, injected: 0 };
  const fs = await createLocalFs({ root: area.root, anchoring: 'proc', io: replacingIo('open', failures) });
  const err = await fs.readText(await fs.resolve('gone.txt')).catch((e: unknown) => e);
  expect((err as FsError).code).toBe('FS_NOT_FOUND');
});
