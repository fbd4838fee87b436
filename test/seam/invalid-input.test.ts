import { describe, expect, it } from 'vitest';
import { FsError, type FileSystem, type FsTarget } from '../../src/seam/index.js';
import { createMemoryFs, type MemoryFileSystem } from '../../src/backends/memory/index.js';

const UTF16 = new Uint8Array([0xff, 0xfe, 0x68, 0x00, 0x69, 0x00]);
const BINARY = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]);
const BAD_UTF8 = new Uint8Array([0x61, 0x62, 0xc3, 0x28, 0x0a]);

function seeded(): MemoryFileSystem {
  return createMemoryFs({
    files: { '/w/a.txt': 'hello\n', '/w/dir': null, '/w/bin.dat': BINARY, '/w/u16.txt': UTF16, '/w/bad.txt': BAD_UTF8 },
    cwd: '/w',
  });
}

/** Runs `op`, expects an FsError with `code`, and that the filesystem is byte-identical afterwards. */
async function expectRefused(fs: MemoryFileSystem, code: string, op: (fs: FileSystem) => Promise<unknown>) {
  const before = fs.snapshot();
  let thrown: unknown;
  try {
    await op(fs);
  } catch (e) {
    thrown = e;
  }
  expect(thrown, 'expected a rejection').toBeInstanceOf(FsError);
  expect((thrown as FsError).code).toBe(code);
  expect(fs.snapshot()).toEqual(before);
}

const t = (fs: FileSystem, p: string) => fs.resolve(p);
const notATarget = [undefined, null, 'a.txt', 42, {}, { targetKey: '', displayPath: 'x' }] as unknown as FsTarget[];

describe('invalid input to every ctx.fs operation', () => {
  it('paths: empty, NUL byte, non-string', async () => {
    const fs = seeded();
    for (const bad of ['', 'a\0b', '\0', 42, null, undefined, ['a.txt'], { path: 'a.txt' }]) {
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.resolve(bad as string));
      if (bad !== undefined) await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.resolve('a.txt', { cwd: bad as string }));
    }
  });

  it('targets: anything that did not come from resolve()', async () => {
    const fs = seeded();
    for (const bad of notATarget) {
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.stat(bad));
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.readText(bad));
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.streamText(bad));
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.readBytes(bad, { maxBytes: 10 }));
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.listDir(bad));
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.writeText(bad, 'x'));
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.writeBytes(bad, new Uint8Array(1)));
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.editText(bad, { oldString: 'a', newString: 'b' }));
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.remove(bad));
    }
  });

  it('arguments: non-string content, NUL or lone surrogate in content, bad intents, bad edits, bad maxBytes', async () => {
    const fs = seeded();
    const a = await t(fs, 'a.txt');
    for (const content of [42, null, undefined, {}, 'nul\0inside', 'lone \uD800 surrogate']) {
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.writeText(a, content as string));
    }
    await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.writeBytes(a, 'text' as unknown as Uint8Array));
    for (const intent of [{}, { kind: 'replaceIfVersion' }, { kind: 'replaceIfVersion', version: '' }, { kind: 'nope' }, 'createIfAbsent']) {
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.writeText(a, 'x', intent as never));
    }
    await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.remove(a, { kind: 'createIfAbsent' }));
    for (const edit of [
      null,
      {},
      { oldString: '', newString: 'x' },
      { oldString: 'hello', newString: 42 },
      { oldString: 'hello', newString: 'hello' },
      { oldString: 'hello', newString: 'x\0' },
      { oldString: 'hello', newString: 'x', replaceAll: 'yes' },
    ]) {
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.editText(a, edit as never));
    }
    for (const maxBytes of [-1, 1.5, Number.NaN, '10', undefined]) {
      await expectRefused(fs, 'FS_INVALID_ARGUMENT', (f) => f.readBytes(a, { maxBytes } as never));
    }
  });

  it('a directory where a file is expected, and a file where a directory is expected', async () => {
    const fs = seeded();
    const dir = await t(fs, 'dir');
    await expectRefused(fs, 'FS_NOT_REGULAR_FILE', (f) => f.readText(dir));
    await expectRefused(fs, 'FS_NOT_REGULAR_FILE', (f) => f.readBytes(dir, { maxBytes: 100 }));
    await expectRefused(fs, 'FS_NOT_REGULAR_FILE', (f) => f.writeText(dir, 'x'));
    await expectRefused(fs, 'FS_NOT_REGULAR_FILE', (f) => f.editText(dir, { oldString: 'a', newString: 'b' }));
    await expectRefused(fs, 'FS_NOT_REGULAR_FILE', (f) => f.remove(dir));
    const file = await t(fs, 'a.txt');
    await expectRefused(fs, 'FS_NOT_DIRECTORY', (f) => f.listDir(file));
    await expectRefused(fs, 'FS_NOT_DIRECTORY', async (f) => f.writeText(await f.resolve('a.txt/child.txt'), 'x'));
  });

  it('binary, invalid UTF-8 and UTF-16 files: FS_NOT_TEXT for read and edit, file untouched, message says what', async () => {
    const fs = seeded();
    const cases: Array<[string, RegExp]> = [
      ['bin.dat', /NUL byte at byte 4/],
      ['bad.txt', /invalid UTF-8 at byte 2/],
      ['u16.txt', /UTF-16/],
    ];
    for (const [name, message] of cases) {
      const target = await t(fs, name);
      await expectRefused(fs, 'FS_NOT_TEXT', (f) => f.readText(target));
      await expectRefused(fs, 'FS_NOT_TEXT', (f) => f.streamText(target));
      await expectRefused(fs, 'FS_NOT_TEXT', (f) => f.editText(target, { oldString: 'h', newString: 'H' }));
      await expect(fs.readText(target)).rejects.toThrow(message);
      // Raw bytes remain readable.
      expect((await fs.readBytes(target, { maxBytes: 100 })).bytes.length).toBeGreaterThan(0);
    }
  });

  it('missing files and size limits', async () => {
    const fs = seeded();
    const missing = await t(fs, 'nope.txt');
    await expectRefused(fs, 'FS_NOT_FOUND', (f) => f.readText(missing));
    await expectRefused(fs, 'FS_NOT_FOUND', (f) => f.editText(missing, { oldString: 'a', newString: 'b' }));
    await expectRefused(fs, 'FS_NOT_FOUND', (f) => f.remove(missing));
    await expectRefused(fs, 'FS_NOT_FOUND', (f) => f.listDir(missing));
    await expectRefused(fs, 'FS_TOO_LARGE', async (f) => f.readBytes(await f.resolve('a.txt'), { maxBytes: 3 }));
    expect(await fs.stat(missing)).toBeUndefined();
  });

  it('an aborted signal gives FS_ABORTED before anything changes', async () => {
    const fs = seeded();
    const a = await t(fs, 'a.txt');
    const signal = AbortSignal.abort();
    await expectRefused(fs, 'FS_ABORTED', (f) => f.resolve('a.txt', { signal }));
    await expectRefused(fs, 'FS_ABORTED', (f) => f.readText(a, { signal }));
    await expectRefused(fs, 'FS_ABORTED', (f) => f.writeText(a, 'x', undefined, { signal }));
    await expectRefused(fs, 'FS_ABORTED', (f) => f.editText(a, { oldString: 'hello', newString: 'x' }, undefined, { signal }));
    await expectRefused(fs, 'FS_ABORTED', (f) => f.remove(a, undefined, { signal }));
  });
});
