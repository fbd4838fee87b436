import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/backends/local/provider.js';
import { releasing } from '../../src/seam/releasing.js';
import { contentVersion } from '../../src/seam/version.js';
import { createFs } from '../../src/seam/fs.js';
import type { FileSystem, FsProvider, FsVersion } from '../../src/seam/index.js';
import { makeArea, type Area } from './helpers.js';
import { codeOf } from '../support/code-of.js';

// A guarded edit of a file over the text limit checks the guard's version in the pass that copies
// the file (no hash of its own first): whatever another writer does meanwhile, nothing is
// published unless the bytes edited were that version and the file still is.
const MiB = 1024 * 1024;
const LINE = 'the quick brown fox jumps over the lazy dog, line after line after line\n';
const body = (marker: string) => LINE.repeat(Math.ceil((MiB * 1.5) / LINE.length)) + `${marker}\n` + LINE.repeat(Math.ceil(MiB / LINE.length));

let area: Area;
let path: string;
let calls: { stat: number };
/** Runs once, after the first chunk of the next streamed read. */
let midRead: (() => Promise<void>) | undefined;
/** Runs once, after the next streamed read has read its last chunk (and found the file unchanged). */
let afterRead: (() => Promise<void>) | undefined;

function hooked(inner: FsProvider): FsProvider {
  const p: FsProvider = Object.create(inner);
  Object.assign(p, {
    stat: (...args: Parameters<FsProvider['stat']>) => {
      calls.stat++;
      return inner.stat(...args);
    },
    openRead: async (...args: Parameters<NonNullable<FsProvider['openRead']>>) => {
      const s = await inner.openRead!(...args);
      async function* chunks() {
        let n = 0;
        for await (const c of s.chunks) {
          yield c;
          if (n++ === 0 && midRead) {
            const run = midRead;
            midRead = undefined;
            await run();
          }
        }
        const run = afterRead;
        afterRead = undefined;
        await run?.();
      }
      // Let go of the inner stream even when the wrapper is returned before it started.
      return { ...s, versionRead: s.versionRead, chunks: releasing(chunks(), () => s.chunks[Symbol.asyncIterator]().return?.(undefined)) };
    },
  });
  return p;
}

function makeFs(racyWindowMs?: number): FileSystem {
  const inner = createLocalProvider({ root: area.root, ...(racyWindowMs === undefined ? {} : { racyWindowMs }) });
  return createFs(hooked(inner), { maxTextBytes: 1024 });
}

const edit = { oldString: 'MARKER_ONE', newString: 'MARKER_TWO', replaceAll: false };

beforeEach(async () => {
  area = await makeArea('stream-edit');
  path = join(area.root, 'big.txt');
  await fsp.writeFile(path, body('MARKER_ONE'));
  calls = { stat: 0 };
  midRead = undefined;
  afterRead = undefined;
});
afterEach(() => area.cleanup());

describe('a guarded edit of a large file (local)', () => {
  it('edits in one pass: the version comes from the copy, not from a hash of its own, and is what the file holds', async () => {
    const fs = makeFs();
    const t = await fs.resolve('big.txt');
    const guard = { version: contentVersion(await fsp.readFile(path)) };
    const out = await fs.editText(t, edit, guard);
    const now = await fsp.readFile(path);
    expect(now.toString()).toBe(body('MARKER_TWO'));
    expect(out.version).toBe(contentVersion(now));
    expect(out.replacements).toBe(1);
    expect(calls.stat).toBe(0);
    expect(await fsp.readdir(area.root)).toEqual(['big.txt']);
  });

  it('a file renamed over by another writer during the copy is not replaced: FS_CONFLICT, the other bytes stay', async () => {
    const fs = makeFs();
    const t = await fs.resolve('big.txt');
    const guard = { version: contentVersion(await fsp.readFile(path)) };
    const theirs = body('THEIRS');
    midRead = async () => {
      await fsp.writeFile(join(area.area, 'theirs.txt'), theirs);
      await fsp.rename(join(area.area, 'theirs.txt'), path);
    };
    expect(await codeOf(fs.editText(t, edit, guard))).toBe('FS_CONFLICT');
    expect(await fsp.readFile(path, 'utf8')).toBe(theirs);
    expect(await fsp.readdir(area.root)).toEqual(['big.txt']);
  });

  it('a file renamed over after the copy read it, before publication, is not replaced: FS_STALE_VERSION', async () => {
    for (const racyWindowMs of [undefined, 0]) {
      const fs = makeFs(racyWindowMs);
      const t = await fs.resolve('big.txt');
      const guard = { version: contentVersion(await fsp.readFile(path)) };
      const theirs = body(`THEIRS_${racyWindowMs}`);
      afterRead = async () => {
        await fsp.writeFile(join(area.area, 'theirs.txt'), theirs);
        await fsp.rename(join(area.area, 'theirs.txt'), path);
      };
      expect(await codeOf(fs.editText(t, edit, guard))).toBe('FS_STALE_VERSION');
      expect(await fsp.readFile(path, 'utf8')).toBe(theirs);
      expect(await fsp.readdir(area.root)).toEqual(['big.txt']);
      await fsp.writeFile(path, body('MARKER_ONE'));
    }
  });

  it('bytes of another version edited, the file back at the guard version by publication: refused, nothing published', async () => {
    const fs = makeFs();
    const t = await fs.resolve('big.txt');
    const ours = body('MARKER_ONE');
    const guard = { version: contentVersion(Buffer.from(ours)) };
    await fsp.writeFile(path, body('MARKER_ONE').replace('fox', 'cat'));
    afterRead = async () => {
      await fsp.writeFile(join(area.area, 'back.txt'), ours);
      await fsp.rename(join(area.area, 'back.txt'), path);
    };
    expect(await codeOf(fs.editText(t, edit, guard))).toBe('FS_STALE_VERSION');
    expect(await fsp.readFile(path, 'utf8')).toBe(ours);
    expect(await fsp.readdir(area.root)).toEqual(['big.txt']);
  });

  it('the same bytes renamed over after the copy are the same version: the edit is published', async () => {
    const fs = makeFs();
    const t = await fs.resolve('big.txt');
    const guard = { version: contentVersion(await fsp.readFile(path)) };
    afterRead = async () => {
      await fsp.writeFile(join(area.area, 'same.txt'), body('MARKER_ONE'));
      await fsp.rename(join(area.area, 'same.txt'), path);
    };
    const out = await fs.editText(t, edit, guard);
    expect(await fsp.readFile(path, 'utf8')).toBe(body('MARKER_TWO'));
    expect(out.version).toBe(contentVersion(Buffer.from(body('MARKER_TWO'))));
  });

  it('a file rewritten in place during the copy is not replaced: FS_CONFLICT, the other bytes stay', async () => {
    const fs = makeFs();
    const t = await fs.resolve('big.txt');
    const guard = { version: contentVersion(await fsp.readFile(path)) };
    const theirs = body('MARKER_XXX');
    midRead = () => fsp.writeFile(path, theirs);
    expect(await codeOf(fs.editText(t, edit, guard))).toBe('FS_CONFLICT');
    expect(await fsp.readFile(path, 'utf8')).toBe(theirs);
    expect(await fsp.readdir(area.root)).toEqual(['big.txt']);
  });

  it('a guard the file no longer holds is FS_STALE_VERSION, before what the content says (no match, not text)', async () => {
    const fs = makeFs();
    const t = await fs.resolve('big.txt');
    const guard = { version: contentVersion(await fsp.readFile(path)) };
    for (const theirs of [body('MARKER_ONE').replace('fox', 'cat'), body('NO_MARKER'), `${body('MARKER_ONE')}\0`]) {
      await fsp.writeFile(path, theirs);
      expect(await codeOf(fs.editText(t, edit, guard))).toBe('FS_STALE_VERSION');
      expect(await fsp.readFile(path, 'utf8')).toBe(theirs);
    }
    expect(await fsp.readdir(area.root)).toEqual(['big.txt']);
  });

  it('a cached version is not used once another writer changed the file, even with its size and mtime kept', async () => {
    // No racy window: the version hashed by stat is trusted as long as the stat tuple holds.
    const fs = makeFs(0);
    const t = await fs.resolve('big.txt');
    const before = await fsp.stat(path);
    const old = (await fs.stat(t))!.version as FsVersion;
    const theirs = body('MARKER_ONE').replace('fox', 'cat');
    await fsp.writeFile(path, theirs);
    await fsp.utimes(path, before.atime, before.mtime);
    expect(await codeOf(fs.editText(t, edit, { version: old }))).toBe('FS_STALE_VERSION');
    expect(await fsp.readFile(path, 'utf8')).toBe(theirs);
    // The version the file does hold is accepted.
    const out = await fs.editText(t, edit, { version: contentVersion(Buffer.from(theirs)) });
    expect(out.version).toBe(contentVersion(await fsp.readFile(path)));
  });

  it('a version found by the copy is cached for the next call, and a file renamed over after it is still seen', async () => {
    const fs = makeFs(0);
    const t = await fs.resolve('big.txt');
    const first = contentVersion(await fsp.readFile(path));
    afterRead = async () => {
      // Read to the end (its version now cached), then replaced by bytes of another version before the swap publishes.
      await fsp.writeFile(join(area.area, 'theirs.txt'), body('MARKER_ONE').replace('lazy', 'busy'));
      await fsp.rename(join(area.area, 'theirs.txt'), path);
    };
    expect(await codeOf(fs.editText(t, edit, { version: first }))).toBe('FS_STALE_VERSION');
    const theirs = await fsp.readFile(path, 'utf8');
    expect((await fs.stat(t))!.version).toBe(contentVersion(Buffer.from(theirs)));
    expect(await codeOf(fs.editText(t, edit, { version: first }))).toBe('FS_STALE_VERSION');
    expect(await fsp.readFile(path, 'utf8')).toBe(theirs);
  });

  it('writeBytesFrom with a guard that does not hold is refused before its source is read (only an edit checks at the end)', async () => {
    const fs = makeFs();
    const t = await fs.resolve('big.txt');
    let pulled = 0;
    async function* source() {
      pulled++;
      yield Buffer.from('new content\n');
    }
    const stale = contentVersion(Buffer.from('something else'));
    expect(await codeOf(fs.writeBytesFrom!(t, source(), { kind: 'replaceIfVersion', version: stale }))).toBe('FS_STALE_VERSION');
    expect(pulled).toBe(0);
    expect(await fsp.readFile(path, 'utf8')).toBe(body('MARKER_ONE'));
  });
});
