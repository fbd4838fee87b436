import { mkdtemp, rm, writeFile, mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { isFsError, type FileSystem } from '../../src/seam/index.js';
import { effectiveDoc } from './stores.js';
import { codeOf } from '../support/code-of.js';



async function setup(files: Record<string, string | null> = {}) {
  const lower = createMemoryFs({ files });
  const fs = await createOverlayFs({ lower });
  return { lower, fs };
}
const at = (fs: FileSystem, p: string) => fs.resolve(p);
async function read(fs: FileSystem, p: string) {
  try {
    return (await fs.readText(await at(fs, p))).text;
  } catch (err) {
    if (isFsError(err, 'FS_NOT_FOUND')) return undefined;
    throw err;
  }
}
const names = async (fs: FileSystem, p: string) => (await fs.listDir(await at(fs, p))).map((e) => e.name);

describe('overlay directories', () => {
  it('rmdir: an upper-made empty directory just goes; a lower one is hidden, also from files that appear later', async () => {
    const { lower, fs } = await setup({ '/d/a': 'a', '/d/e/f': 'f', '/keep': 'k' });
    await fs.mkdir(await at(fs, '/made'));
    await fs.rmdir(await at(fs, '/made'));
    expect(await fs.changes()).toEqual([]);
    expect(await codeOf(fs.rmdir(await at(fs, '/d')))).toBe('FS_NOT_EMPTY');
    expect(await names(fs, '/d')).toEqual(['a', 'e']);
    await fs.rmdir(await at(fs, '/d'), { recursive: true });
    expect(await fs.stat(await at(fs, '/d'))).toBeUndefined();
    expect(await read(lower, '/d/a')).toBe('a');
    // Appears in the lower afterwards: still cut off.
    await lower.writeText(await at(lower, '/d/late'), 'late');
    expect(await fs.stat(await at(fs, '/d/late'))).toBeUndefined();
    expect(await names(fs, '/')).toEqual(['keep']);
    // Made again: only the overlay's contents show.
    await fs.mkdir(await at(fs, '/d'));
    expect(await names(fs, '/d')).toEqual([]);
    await fs.writeText(await at(fs, '/d/new'), 'n');
    expect(await names(fs, '/d')).toEqual(['new']);
    const changes = (await fs.changes()).map((c) => `${c.kind} ${c.type} ${c.path}`);
    expect(changes).toEqual(['modified directory /d', 'deleted file /d/a', 'deleted directory /d/e', 'deleted file /d/e/f', 'added file /d/new']);
  });

  it('recursive rmdir records a whiteout with its base for every lower file below', async () => {
    const { lower, fs } = await setup({ '/d/a': 'a', '/d/e/f': 'f' });
    await fs.rmdir(await at(fs, '/d'), { recursive: true });
    const baseOf = async (p: string) => (await lower.stat(await at(lower, p)))!.version;
    expect(await fs.changes()).toEqual([
      { path: '/d', kind: 'deleted', type: 'directory', baseVersion: undefined },
      { path: '/d/a', kind: 'deleted', type: 'file', baseVersion: await baseOf('/d/a') },
      { path: '/d/e', kind: 'deleted', type: 'directory', baseVersion: undefined },
      { path: '/d/e/f', kind: 'deleted', type: 'file', baseVersion: await baseOf('/d/e/f') },
    ]);
    expect(await fs.diff()).toContain('deleted file mode 100644');
    expect(await fs.diff()).not.toContain('diff --git a/d b/d\n');
    const result = await fs.commit();
    expect(result.conflicts).toEqual([]);
    expect(result.committed).toEqual(['/d', '/d/a', '/d/e', '/d/e/f']);
    expect(await lower.stat(await at(lower, '/d'))).toBeUndefined();
  });

  it('commit of a removed directory where a file appeared underneath is a conflict and removes nothing', async () => {
    const { lower, fs } = await setup({ '/d/a': 'a' });
    await fs.rmdir(await at(fs, '/d'), { recursive: true });
    await lower.writeText(await at(lower, '/d/appeared'), 'x');
    const result = await fs.commit();
    expect(result.conflicts.map((c) => [c.path, c.code])).toEqual([['/d', 'FS_CONFLICT']]);
    expect(result.conflicts[0]!.message).toContain('/d/appeared');
    // The whiteout of /d/a was committed on its own (it was as the overlay saw it); the directory and the new file stay.
    expect(await read(lower, '/d/appeared')).toBe('x');
    expect((await fs.changes()).map((c) => c.path)).toEqual(['/d']);
    const forced = await fs.commit(undefined, { force: true });
    expect(forced.overwritten).toEqual(['/d']);
    expect(await lower.stat(await at(lower, '/d'))).toBeUndefined();
  });

  it('an empty directory made in the overlay is committed with mkdir and discarded', async () => {
    const { lower, fs } = await setup();
    await fs.mkdir(await at(fs, '/x/y'));
    expect(await fs.changes()).toEqual([{ path: '/x/y', kind: 'added', type: 'directory', baseVersion: undefined }]);
    expect(await fs.diff()).toBe('');
    await fs.discard(['/x/y']);
    expect(await fs.stat(await at(fs, '/x/y'))).toBeUndefined();
    await fs.mkdir(await at(fs, '/x/z'));
    expect((await fs.commit()).committed).toEqual(['/x/z']);
    expect((await lower.stat(await at(lower, '/x/z')))?.type).toBe('directory');
    expect(await fs.changes()).toEqual([]);
  });
});

describe('overlay rename', () => {
  it('moves a file by copy-up and a whiteout; changes shows one rename; commit uses the lower rename', async () => {
    const { lower, fs } = await setup({ '/a.txt': 'one\ntwo\n', '/b.txt': 'old b\n' });
    const calls: string[] = [];
    const rename = lower.rename.bind(lower);
    lower.rename = async (...args) => {
      calls.push(`${args[0].targetKey}->${args[1].targetKey} ${JSON.stringify(args[2])}`);
      return rename(...args);
    };
    const v = (await fs.stat(await at(fs, '/a.txt')))!.version;
    expect(await codeOf(fs.rename(await at(fs, '/a.txt'), await at(fs, '/b.txt')))).toBe('FS_ALREADY_EXISTS');
    expect(await codeOf(fs.rename(await at(fs, '/a.txt'), await at(fs, '/c.txt'), { expect: 'sha256:stale' as never }))).toBe('FS_STALE_VERSION');
    await fs.rename(await at(fs, '/a.txt'), await at(fs, '/c/d.txt'), { expect: v });
    expect(await read(fs, '/a.txt')).toBeUndefined();
    expect(await read(fs, '/c/d.txt')).toBe('one\ntwo\n');
    expect(await read(lower, '/a.txt')).toBe('one\ntwo\n');
    expect(await fs.changes()).toEqual([
      { path: '/c/d.txt', kind: 'renamed', type: 'file', from: '/a.txt', baseVersion: undefined, version: v, size: 8 },
    ]);
    expect(await fs.diff()).toBe('diff --git a/a.txt b/c/d.txt\nsimilarity index 100%\nrename from a.txt\nrename to c/d.txt\n');
    const result = await fs.commit();
    expect(result.committed).toEqual(['/c/d.txt']);
    expect(calls).toEqual([`/a.txt->/c/d.txt ${JSON.stringify({ expect: v, replace: false })}`]);
    expect(await read(lower, '/c/d.txt')).toBe('one\ntwo\n');
    expect(await read(lower, '/a.txt')).toBeUndefined();
  });

  it('a moved and edited file diffs as a rename with hunks and commits as a guarded add and remove', async () => {
    const { lower, fs } = await setup({ '/a.txt': 'one\ntwo\n' });
    let renames = 0;
    const rename = lower.rename.bind(lower);
    lower.rename = async (...args) => (renames++, rename(...args));
    await fs.rename(await at(fs, '/a.txt'), await at(fs, '/b.txt'));
    await fs.editText(await at(fs, '/b.txt'), { oldString: 'two', newString: 'TWO' });
    expect((await fs.changes()).map((c) => [c.kind, c.path, c.from])).toEqual([['renamed', '/b.txt', '/a.txt']]);
    expect(await fs.diff()).toBe(
      ['diff --git a/a.txt b/b.txt', 'rename from a.txt', 'rename to b.txt', '--- a/a.txt', '+++ b/b.txt', '@@ -1,2 +1,2 @@', ' one', '-two', '+TWO', ''].join('\n'),
    );
    expect((await fs.commit()).committed).toEqual(['/b.txt']);
    expect(renames).toBe(0);
    expect(await read(lower, '/b.txt')).toBe('one\nTWO\n');
    expect(await read(lower, '/a.txt')).toBeUndefined();
  });

  it('a rename whose source changed in the lower is a conflict and moves nothing', async () => {
    const { lower, fs } = await setup({ '/a.txt': 'a\n' });
    await fs.rename(await at(fs, '/a.txt'), await at(fs, '/b.txt'));
    await lower.writeText(await at(lower, '/a.txt'), 'changed below\n');
    const result = await fs.commit();
    expect(result.conflicts.map((c) => [c.path, c.code])).toEqual([['/b.txt', 'FS_CONFLICT']]);
    expect(await read(lower, '/a.txt')).toBe('changed below\n');
    expect(await read(lower, '/b.txt')).toBeUndefined();
    expect((await fs.changes()).map((c) => c.kind)).toEqual(['renamed']);
  });

  it('moves a directory: every file of the view below, and the lower directory is cut off', async () => {
    const { lower, fs } = await setup({ '/d/a': 'a', '/d/e/f': 'f' });
    await fs.writeText(await at(fs, '/d/up'), 'upper');
    await fs.rename(await at(fs, '/d'), await at(fs, '/x'));
    expect(await names(fs, '/')).toEqual(['x']);
    expect(await names(fs, '/x')).toEqual(['a', 'e', 'up']);
    expect(await read(fs, '/x/e/f')).toBe('f');
    expect((await fs.changes()).map((c) => `${c.kind} ${c.path}${c.from ? ` <- ${c.from}` : ''}`)).toEqual([
      'deleted /d',
      'deleted /d/e',
      'renamed /x/a <- /d/a',
      'renamed /x/e/f <- /d/e/f',
      'added /x/up',
    ]);
    const result = await fs.commit();
    expect(result.conflicts).toEqual([]);
    expect(lower.snapshot()).toEqual(createMemoryFs({ files: { '/x/a': 'a', '/x/e/f': 'f', '/x/up': 'upper' } }).snapshot());
  });

  it('a file that appears in the lower where the view has a directory: what lies below it conflicts, nothing is half-written, the rest commits', async () => {
    const { lower, fs } = await setup({ '/d/x': 'x', '/d/e/f': 'f', '/keep': 'k' });
    await fs.rename(await at(fs, '/d'), await at(fs, '/a'));
    await fs.writeText(await at(fs, '/a/new'), 'new');
    await fs.writeText(await at(fs, '/other'), 'other');
    await lower.writeText(await at(lower, '/a'), 'a file below');
    const result = await fs.commit();
    expect(result.failed).toEqual([]);
    expect(result.conflicts.map((c) => c.path)).toEqual(['/a/e/f', '/a/new', '/a/x', '/d', '/d/e']);
    for (const c of result.conflicts.filter((c) => c.path.startsWith('/a/'))) {
      expect(c.code).toBe('FS_CONFLICT');
      expect(c.message).toContain('the lower now has a file at "/a"');
    }
    expect(result.committed).toEqual(['/other']);
    // The lower is as it was, plus the committed file: nothing moved or removed halfway.
    expect(lower.snapshot()).toEqual(
      createMemoryFs({ files: { '/d/x': 'x', '/d/e/f': 'f', '/keep': 'k', '/a': 'a file below', '/other': 'other' } }).snapshot(),
    );
    expect(await read(fs, '/a/x')).toBe('x');
    // Once the lower's file goes, the same commit goes through.
    await lower.remove(await at(lower, '/a'));
    const again = await fs.commit();
    expect(again.conflicts).toEqual([]);
    expect(lower.snapshot()).toEqual(
      createMemoryFs({ files: { '/a/x': 'x', '/a/e/f': 'f', '/a/new': 'new', '/keep': 'k', '/other': 'other' } }).snapshot(),
    );
  });

  it('nothing is made at the source of a move that conflicts: it waits for the move', async () => {
    const { lower, fs } = await setup({ '/a': 'a' });
    await fs.rename(await at(fs, '/a'), await at(fs, '/d/a'));
    await fs.mkdir(await at(fs, '/a'));
    await lower.writeText(await at(lower, '/d/a'), 'appeared');
    const result = await fs.commit();
    expect(result.conflicts.map((c) => c.path)).toEqual(['/a', '/d/a']);
    expect(result.conflicts[0]!.message).toContain('whose move to "/d/a" was not committed');
    expect(lower.snapshot()).toEqual(createMemoryFs({ files: { '/a': 'a', '/d/a': 'appeared' } }).snapshot());
  });

  it('a file made where a removed lower directory was, then moved or removed, leaves no file deletion behind', async () => {
    for (const away of ['move', 'remove'] as const) {
      const { lower, fs } = await setup({ '/e': null });
      await fs.rmdir(await at(fs, '/e'));
      await fs.writeText(await at(fs, '/e'), 'x');
      if (away === 'move') await fs.rename(await at(fs, '/e'), await at(fs, '/a'));
      else await fs.remove(await at(fs, '/e'));
      // The removed directory is the only change at /e: there was never a file there to delete.
      expect((await fs.changes()).filter((c) => c.path === '/e'), away).toEqual([expect.objectContaining({ kind: 'deleted', type: 'directory' })]);
      const result = await fs.commit();
      expect(result.conflicts, away).toEqual([]);
      expect(await lower.stat(await at(lower, '/e')), away).toBeUndefined();
      expect(await read(lower, '/a'), away).toBe(away === 'move' ? 'x' : undefined);
    }
  });

  it('discarding either name of a rename brings the file back', async () => {
    const { fs } = await setup({ '/a': 'a' });
    await fs.rename(await at(fs, '/a'), await at(fs, '/b'));
    await fs.discard(['/a']);
    expect(await read(fs, '/a')).toBe('a');
    expect(await read(fs, '/b')).toBeUndefined();
    expect(await fs.changes()).toEqual([]);
  });

  it('exposes its provider', async () => {
    const { fs } = await setup({ '/a': 'a' });
    expect(typeof fs.provider.swap).toBe('function');
    expect((await fs.provider.stat(await at(fs, '/a'), {}))?.type).toBe('file');
  });
});

describe('overlay state format', () => {
  it('saves renames and removed directories and reopens them', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'dsh-overlay-v2-'));
    try {
      const lower = createMemoryFs({ files: { '/a': 'a', '/d/f': 'f' } });
      const fs = await createOverlayFs({ lower, stateDir });
      await fs.rename(await at(fs, '/a'), await at(fs, '/b'));
      await fs.rmdir(await at(fs, '/d'), { recursive: true });
      const doc = await effectiveDoc(stateDir);
      expect(doc.version).toBe(5);
      expect(doc.opaque).toEqual(['/d']);
      expect(doc.entries.find((e: { path: string }) => e.path === '/b')?.origin).toMatchObject({ path: '/a' });
      const reopened = await createOverlayFs({ lower, stateDir });
      expect(await reopened.changes()).toEqual(await fs.changes());
      expect(await names(reopened, '/')).toEqual(['b']);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it('opens a version-1 document and saves it as version 5 on the next change', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'dsh-overlay-v1-'));
    try {
      await mkdir(join(stateDir, 'blobs'), { recursive: true });
      const lower = createMemoryFs({ files: { '/old': 'o' } });
      const base = (await lower.stat(await at(lower, '/old')))!.version;
      await writeFile(
        join(stateDir, 'overlay.json'),
        JSON.stringify({ format: 'dsh-fs-overlay', version: 1, root: '/', entries: [{ path: '/old', base, blob: null }], dirs: ['/made'] }),
      );
      const fs = await createOverlayFs({ lower, stateDir });
      expect((await fs.changes()).map((c) => `${c.kind} ${c.type} ${c.path}`)).toEqual(['added directory /made', 'deleted file /old']);
      await fs.writeText(await at(fs, '/n'), 'n');
      const doc = JSON.parse(await readFile(join(stateDir, 'overlay.json'), 'utf8'));
      expect(doc.version).toBe(5);
      expect(doc.opaque).toEqual([]);
      expect(doc.dirs).toEqual(['/made']);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it('refuses an unknown format version', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'dsh-overlay-v9-'));
    try {
      await writeFile(join(stateDir, 'overlay.json'), JSON.stringify({ format: 'dsh-fs-overlay', version: 9, root: '/', entries: [], dirs: [] }));
      expect(await codeOf(createOverlayFs({ lower: createMemoryFs(), stateDir }))).toBe('FS_IO_ERROR');
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});


