import { describe, expect, it } from 'vitest';
import { createMemoryFs, type MemoryFileSystem } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { contentVersion, isFsError, type FileSystem } from '../../src/seam/index.js';
import { codeOf } from '../support/code-of.js';

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');

async function setup(files: Record<string, string | null | { symlink: string }> = {}) {
  const lower = createMemoryFs({ files });
  const fs = await createOverlayFs({ lower });
  return { lower, fs };
}


async function read(fs: FileSystem, path: string): Promise<string | undefined> {
  try {
    return (await fs.readText(await fs.resolve(path))).text;
  } catch (err) {
    if (isFsError(err, 'FS_NOT_FOUND')) return undefined;
    throw err;
  }
}

async function write(fs: FileSystem, path: string, content: string) {
  return fs.writeText(await fs.resolve(path), content);
}

async function names(fs: FileSystem, path: string) {
  return (await fs.listDir(await fs.resolve(path))).map((e) => `${e.name}:${e.type}`);
}

describe('overlay view', () => {
  it('reads fall through, writes and removes stay in the upper', async () => {
    const { lower, fs } = await setup({ '/a.txt': 'lower a', '/d/b.txt': 'lower b' });
    const before = lower.snapshot();
    expect(await read(fs, '/a.txt')).toBe('lower a');
    await write(fs, '/a.txt', 'upper a');
    await write(fs, '/new.txt', 'new');
    await fs.remove(await fs.resolve('/d/b.txt'));
    expect(await read(fs, '/a.txt')).toBe('upper a');
    expect(await read(fs, '/new.txt')).toBe('new');
    expect(await read(fs, '/d/b.txt')).toBeUndefined();
    expect(await codeOf(fs.readText(await fs.resolve('/d/b.txt')))).toBe('FS_NOT_FOUND');
    expect(lower.snapshot()).toEqual(before);
    expect(await read(lower, '/a.txt')).toBe('lower a');
  });

  it('never calls a mutating method of the lower before commit', async () => {
    const inner = createMemoryFs({ files: { '/a.txt': 'a', '/d/b.txt': 'b' } });
    const calls: string[] = [];
    const lower = new Proxy(inner, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(prop));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const fs = await createOverlayFs({ lower });
    const a = await fs.resolve('/a.txt');
    await fs.writeText(a, 'x\ny\n');
    await fs.editText(a, { oldString: 'y', newString: 'z' });
    await fs.writeBytes(await fs.resolve('/n/m.bin'), new Uint8Array([0, 1, 2]));
    await fs.remove(await fs.resolve('/d/b.txt'));
    await fs.listDir(await fs.resolve('/'));
    await fs.diff();
    await fs.discard(['/n']);
    const mutating = calls.filter((c) => ['writeText', 'writeBytes', 'editText', 'remove'].includes(c));
    expect(mutating).toEqual([]);
    await fs.commit();
    expect(calls.filter((c) => ['writeBytes', 'remove'].includes(c)).sort()).toEqual(['remove', 'writeBytes']);
  });

  it('merges listings, hides whiteouts and shows directories made for new files', async () => {
    const { fs } = await setup({ '/d/a.txt': 'a', '/d/b.txt': 'b', '/e': null });
    await fs.remove(await fs.resolve('/d/a.txt'));
    await write(fs, '/d/c.txt', 'c');
    await write(fs, '/x/y/z.txt', 'deep');
    expect(await names(fs, '/')).toEqual(['d:directory', 'e:directory', 'x:directory']);
    expect(await names(fs, '/d')).toEqual(['b.txt:file', 'c.txt:file']);
    expect(await names(fs, '/x')).toEqual(['y:directory']);
    expect((await fs.stat(await fs.resolve('/x/y')))?.type).toBe('directory');
    // Removing the only file leaves the directory, as on any other backend.
    await fs.remove(await fs.resolve('/x/y/z.txt'));
    expect(await names(fs, '/x/y')).toEqual([]);
    const entry = (await fs.listDir(await fs.resolve('/d'))).find((e) => e.name === 'c.txt');
    expect(entry).toMatchObject({ type: 'file', size: 1, target: { targetKey: '/d/c.txt', displayPath: '/d/c.txt' } });
  });

  it('a removed lower file can become a directory, and back', async () => {
    const { lower, fs } = await setup({ '/a': 'file' });
    expect(await codeOf(write(fs, '/a/b', 'x'))).toBe('FS_NOT_DIRECTORY');
    await fs.remove(await fs.resolve('/a'));
    await write(fs, '/a/b', 'under a');
    expect(await names(fs, '/a')).toEqual(['b:file']);
    expect(await codeOf(fs.readText(await fs.resolve('/a')))).toBe('FS_NOT_REGULAR_FILE');
    expect(await codeOf(write(fs, '/a', 'file again'))).toBe('FS_NOT_REGULAR_FILE');
    expect((await fs.changes()).map((c) => [c.path, c.kind])).toEqual([
      ['/a', 'deleted'],
      ['/a/b', 'added'],
    ]);
    const result = await fs.commit();
    expect(result).toEqual({ committed: ['/a', '/a/b'], overwritten: [], conflicts: [], failed: [] });
    expect(await read(lower, '/a/b')).toBe('under a');
    expect(await fs.changes()).toEqual([]);
  });

  it('mirrors the memory provider on type errors', async () => {
    const { fs } = await setup({ '/d/f': 'x' });
    expect(await codeOf(write(fs, '/d', 'x'))).toBe('FS_NOT_REGULAR_FILE');
    expect(await codeOf(fs.remove(await fs.resolve('/d')))).toBe('FS_NOT_REGULAR_FILE');
    expect(await codeOf(fs.listDir(await fs.resolve('/d/f')))).toBe('FS_NOT_DIRECTORY');
    expect(await codeOf(fs.remove(await fs.resolve('/nope')))).toBe('FS_NOT_FOUND');
    expect(await codeOf(fs.editText(await fs.resolve('/d/f/g'), { oldString: 'a', newString: 'b' }))).toBe('FS_NOT_FOUND');
    await write(fs, '/u', 'upper file');
    expect(await codeOf(write(fs, '/u/v', 'x'))).toBe('FS_NOT_DIRECTORY');
    expect(await codeOf(fs.listDir(await fs.resolve('/u')))).toBe('FS_NOT_DIRECTORY');
  });

  it('follows lower symlinks for reads and writes (read-through)', async () => {
    const { lower, fs } = await setup({ '/d/f.txt': 'target', '/link.txt': { symlink: '/d/f.txt' }, '/ld': { symlink: '/d' } });
    const viaLink = await fs.resolve('/link.txt');
    expect(viaLink.targetKey).toBe('/d/f.txt');
    await fs.writeText(viaLink, 'through the link');
    expect(await read(fs, '/d/f.txt')).toBe('through the link');
    await write(fs, '/ld/new.txt', 'in d');
    expect(await names(fs, '/d')).toEqual(['f.txt:file', 'new.txt:file']);
    expect(await names(fs, '/ld')).toEqual(['f.txt:file', 'new.txt:file']);
    await fs.remove(await fs.resolve('/d/f.txt'));
    // The link itself stays; it now dangles in the view.
    expect((await fs.listDir(await fs.resolve('/'))).find((e) => e.name === 'link.txt')?.type).toBe('other');
    expect(await read(lower, '/link.txt')).toBe('target');
  });
});

describe('overlay versions', () => {
  it('an untouched file reports the lower version; identical bytes keep it (V2)', async () => {
    const { lower, fs } = await setup({ '/a.txt': 'same\r\n' });
    const lowerVersion = (await lower.stat(await lower.resolve('/a.txt')))!.version;
    const a = await fs.resolve('/a.txt');
    expect((await fs.stat(a))?.version).toBe(lowerVersion);
    const again = await fs.writeBytes(a, utf8('same\r\n'));
    expect(again.version).toBe(lowerVersion);
    expect(await fs.changes()).toEqual([]);
    const changed = await fs.writeText(a, 'other\n');
    expect(changed.version).toBe(contentVersion(utf8('other\r\n')));
    expect((await fs.changes()).map((c) => c.kind)).toEqual(['modified']);
    // Restoring the original bytes is not a change, and the observation made before stays valid.
    const restored = await fs.writeText(a, 'same\n');
    expect(restored.version).toBe(lowerVersion);
    expect(await fs.changes()).toEqual([]);
    await fs.writeText(a, 'guarded', { kind: 'replaceIfVersion', version: lowerVersion });
  });

  it('uses the lower version for identical bytes even when the lower mints versions its own way', async () => {
    const inner = createMemoryFs({ files: { '/a.txt': 'one' } });
    const etag = (v: string) => `etag-${v.slice(-8)}` as typeof v;
    const lower: FileSystem = {
      ...inner,
      resolve: (p, o) => inner.resolve(p, o),
      contains: (a, b) => inner.contains(a, b),
      stat: async (t, o) => {
        const info = await inner.stat(t, o);
        return info && { ...info, version: etag(info.version) as never };
      },
      readBytes: async (t, o) => {
        const r = await inner.readBytes(t, o);
        return { ...r, version: etag(r.version) as never };
      },
      listDir: (t, o) => inner.listDir(t, o),
      writeBytes: (t, b, i, o) => inner.writeBytes(t, b, i, o),
      remove: (t, i, o) => inner.remove(t, i, o),
    };
    const fs = await createOverlayFs({ lower });
    const a = await fs.resolve('/a.txt');
    const v1 = (await fs.stat(a))!.version;
    expect(v1.startsWith('etag-')).toBe(true);
    expect((await fs.writeText(a, 'two')).version).toBe(contentVersion(utf8('two')));
    expect((await fs.writeText(a, 'one')).version).toBe(v1);
    expect((await fs.stat(a))?.version).toBe(v1);
  });

  it('stat, readBytes and the write result agree on the version (V3)', async () => {
    const { fs } = await setup({ '/a.txt': 'x' });
    const a = await fs.resolve('/a.txt');
    const w = await fs.writeText(a, 'y');
    expect((await fs.stat(a))?.version).toBe(w.version);
    expect((await fs.readBytes(a, { maxBytes: 10 })).version).toBe(w.version);
    const e = await fs.editText(a, { oldString: 'y', newString: 'z' });
    expect((await fs.readText(a)).version).toBe(e.version);
  });

  it('untouched files follow the lower; touched ones do not (V4 for an overlay)', async () => {
    const { lower, fs } = await setup({ '/a.txt': 'a', '/b.txt': 'b' });
    await write(fs, '/b.txt', 'mine');
    await write(lower, '/a.txt', 'changed below');
    await write(lower, '/b.txt', 'changed below');
    await write(lower, '/c.txt', 'created below');
    expect(await read(fs, '/a.txt')).toBe('changed below');
    expect(await read(fs, '/b.txt')).toBe('mine');
    expect(await read(fs, '/c.txt')).toBe('created below');
    expect((await fs.stat(await fs.resolve('/a.txt')))?.version).toBe(contentVersion(utf8('changed below')));
  });

  it('guards work on the overlay view (G1, G2)', async () => {
    const { fs } = await setup({ '/a.txt': 'a' });
    const a = await fs.resolve('/a.txt');
    const v = (await fs.stat(a))!.version;
    expect(await codeOf(fs.writeText(a, 'x', { kind: 'createIfAbsent' }))).toBe('FS_NOT_OBSERVED');
    await fs.writeText(a, 'b', { kind: 'replaceIfVersion', version: v });
    expect(await codeOf(fs.writeText(a, 'c', { kind: 'replaceIfVersion', version: v }))).toBe('FS_STALE_VERSION');
    expect(await codeOf(fs.remove(a, { kind: 'replaceIfVersion', version: v }))).toBe('FS_STALE_VERSION');
    expect(await read(fs, '/a.txt')).toBe('b');
    await fs.remove(a);
    expect(await codeOf(fs.writeText(a, 'd', { kind: 'replaceIfVersion', version: v }))).toBe('FS_STALE_VERSION');
    await fs.writeText(a, 'e', { kind: 'createIfAbsent' });
    expect(await read(fs, '/a.txt')).toBe('e');
  });

  it('concurrent guarded writes from one base: exactly one wins (G3)', async () => {
    const { fs } = await setup({ '/a.txt': 'base' });
    const a = await fs.resolve('/a.txt');
    const v = (await fs.stat(a))!.version;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => codeOf(fs.writeText(a, `w${i}`, { kind: 'replaceIfVersion', version: v }))),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r === 'FS_STALE_VERSION')).toHaveLength(7);
    expect(await read(fs, '/a.txt')).toBe(`w${results.indexOf('ok')}`);
  });

  it('concurrent creates of a file and a file beneath it never leave both', async () => {
    for (let round = 0; round < 20; round++) {
      const { fs } = await setup();
      const outcomes = await Promise.all([codeOf(write(fs, '/p', 'file')), codeOf(write(fs, '/p/q', 'nested'))]);
      expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
      const info = await fs.stat(await fs.resolve('/p'));
      expect(info?.type).toBe(outcomes[0] === 'ok' ? 'file' : 'directory');
    }
  });
});

describe('changes, diff, commit, discard', () => {
  async function scenario() {
    const { lower, fs } = await setup({ '/src/a.ts': 'one\ntwo\nthree\n', '/src/b.ts': 'bee\n', '/keep.txt': 'k\n' });
    await write(fs, '/src/a.ts', 'one\nTWO\nthree\n');
    await fs.remove(await fs.resolve('/src/b.ts'));
    await write(fs, '/docs/new.md', '# new\n');
    return { lower, fs };
  }

  it('lists changes sorted by path with their base versions', async () => {
    const { lower, fs } = await scenario();
    const baseOf = async (p: string) => (await lower.stat(await lower.resolve(p)))!.version;
    expect(await fs.changes()).toEqual([
      { path: '/docs/new.md', kind: 'added', type: 'file', baseVersion: undefined, version: contentVersion(utf8('# new\n')), size: 6 },
      { path: '/src/a.ts', kind: 'modified', type: 'file', baseVersion: await baseOf('/src/a.ts'), version: contentVersion(utf8('one\nTWO\nthree\n')), size: 14 },
      { path: '/src/b.ts', kind: 'deleted', type: 'file', baseVersion: await baseOf('/src/b.ts') },
    ]);
    expect((await fs.changes(['src'])).map((c) => c.path)).toEqual(['/src/a.ts', '/src/b.ts']);
  });

  it('renders a git-style unified diff', async () => {
    const { fs } = await scenario();
    await fs.writeBytes(await fs.resolve('/bin.dat'), new Uint8Array([0, 159, 146, 150]));
    expect(await fs.diff()).toBe(
      [
        'diff --git a/bin.dat b/bin.dat',
        'new file mode 100644',
        'Binary files /dev/null and b/bin.dat differ',
        'diff --git a/docs/new.md b/docs/new.md',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/docs/new.md',
        '@@ -0,0 +1,1 @@',
        '+# new',
        'diff --git a/src/a.ts b/src/a.ts',
        '--- a/src/a.ts',
        '+++ b/src/a.ts',
        '@@ -1,3 +1,3 @@',
        ' one',
        '-two',
        '+TWO',
        ' three',
        'diff --git a/src/b.ts b/src/b.ts',
        'deleted file mode 100644',
        '--- a/src/b.ts',
        '+++ /dev/null',
        '@@ -1,1 +0,0 @@',
        '-bee',
        '',
      ].join('\n'),
    );
    expect(await fs.diff(['/src/b.ts'])).toMatch(/^diff --git a\/src\/b\.ts b\/src\/b\.ts\ndeleted file mode/);
  });

  it('commit publishes every change and keeps the view', async () => {
    const { lower, fs } = await scenario();
    const progress: string[] = [];
    const result = await fs.commit(undefined, { onProgress: (p) => progress.push(`${p.index}/${p.total} ${p.path} ${p.outcome}`) });
    expect(result).toEqual({ committed: ['/docs/new.md', '/src/a.ts', '/src/b.ts'], overwritten: [], conflicts: [], failed: [] });
    // Removals first (deepest first), then creations and rewrites in path order.
    expect(progress).toEqual(['1/3 /src/b.ts committed', '2/3 /docs/new.md committed', '3/3 /src/a.ts committed']);
    expect(await read(lower, '/src/a.ts')).toBe('one\nTWO\nthree\n');
    expect(await read(lower, '/docs/new.md')).toBe('# new\n');
    expect(await read(lower, '/src/b.ts')).toBeUndefined();
    expect(await fs.changes()).toEqual([]);
    expect(await read(fs, '/src/a.ts')).toBe('one\nTWO\nthree\n');
    expect(await read(fs, '/src/b.ts')).toBeUndefined();
    // Idempotent: nothing left to do.
    expect(await fs.commit()).toEqual({ committed: [], overwritten: [], conflicts: [], failed: [] });
  });

  it('reports a conflict for a lower file changed underneath and does not overwrite it', async () => {
    const { lower, fs } = await scenario();
    await write(lower, '/src/a.ts', 'someone else\n');
    await write(lower, '/docs/new.md', 'also created below\n');
    await lower.remove(await lower.resolve('/src/b.ts'));
    const result = await fs.commit();
    // b.ts: removed here and removed below; nothing is lost.
    expect(result.committed).toEqual(['/src/b.ts']);
    expect(result.conflicts.map((c) => [c.path, c.code])).toEqual([
      ['/docs/new.md', 'FS_CONFLICT'],
      ['/src/a.ts', 'FS_CONFLICT'],
    ]);
    expect(result.conflicts[1]!.message).toMatch(/changed since the overlay first saw it/);
    expect(result.failed).toEqual([]);
    expect(await read(lower, '/src/a.ts')).toBe('someone else\n');
    expect(await read(lower, '/docs/new.md')).toBe('also created below\n');
    // The overlay keeps its version of the conflicting files.
    expect(await read(fs, '/src/a.ts')).toBe('one\nTWO\nthree\n');
    expect((await fs.changes()).map((c) => c.path)).toEqual(['/docs/new.md', '/src/a.ts']);
  });

  it('force commits the conflicting paths over what the lower holds now, and says which', async () => {
    const { lower, fs } = await scenario();
    await write(lower, '/src/a.ts', 'someone else\n');
    await write(lower, '/src/b.ts', 'b changed below\n');
    await write(lower, '/docs/new.md', 'also created below\n');
    expect((await fs.commit()).conflicts.map((c) => c.path)).toEqual(['/docs/new.md', '/src/a.ts', '/src/b.ts']);
    const result = await fs.commit(['/src'], { force: true });
    expect(result).toEqual({ committed: ['/src/a.ts', '/src/b.ts'], overwritten: ['/src/a.ts', '/src/b.ts'], conflicts: [], failed: [] });
    expect(await read(lower, '/src/a.ts')).toBe('one\nTWO\nthree\n');
    expect(await read(lower, '/src/b.ts')).toBeUndefined();
    // Outside the selection, the conflict stands.
    expect(await read(lower, '/docs/new.md')).toBe('also created below\n');
    expect((await fs.changes()).map((c) => c.path)).toEqual(['/docs/new.md']);
  });

  it('a file created and removed here while the lower gained one keeps hiding it, and conflicts', async () => {
    const { lower, fs } = await setup();
    await write(fs, '/n.txt', 'mine');
    await write(lower, '/n.txt', 'theirs');
    await fs.remove(await fs.resolve('/n.txt'));
    expect(await read(fs, '/n.txt')).toBeUndefined();
    expect(await fs.changes()).toEqual([{ path: '/n.txt', kind: 'deleted', type: 'file', baseVersion: undefined }]);
    const result = await fs.commit();
    expect(result.conflicts.map((c) => c.path)).toEqual(['/n.txt']);
    expect(await read(lower, '/n.txt')).toBe('theirs');
    await lower.remove(await lower.resolve('/n.txt'));
    expect(await fs.commit()).toEqual({ committed: ['/n.txt'], overwritten: [], conflicts: [], failed: [] });
    expect(await fs.changes()).toEqual([]);
  });

  it('a lower already equal to the overlay is committed, not a conflict', async () => {
    const { lower, fs } = await scenario();
    await write(lower, '/src/a.ts', 'one\nTWO\nthree\n');
    const result = await fs.commit(['/src/a.ts']);
    expect(result).toEqual({ committed: ['/src/a.ts'], overwritten: [], conflicts: [], failed: [] });
  });

  it('commit of selected paths leaves the others in the upper', async () => {
    const { lower, fs } = await scenario();
    const result = await fs.commit(['/src']);
    expect(result.committed).toEqual(['/src/a.ts', '/src/b.ts']);
    expect((await fs.changes()).map((c) => c.path)).toEqual(['/docs/new.md']);
    expect(await read(lower, '/docs/new.md')).toBeUndefined();
  });

  it('a commit failure other than a conflict is reported under failed', async () => {
    const { lower, fs } = await setup({ '/a': 'file' });
    await fs.remove(await fs.resolve('/a'));
    await write(fs, '/a/b', 'nested');
    await write(lower, '/a', 'changed below');
    const result = await fs.commit();
    expect(result.committed).toEqual([]);
    expect(result.conflicts.map((c) => c.path)).toEqual(['/a']);
    expect(result.failed.map((c) => [c.path, c.code])).toEqual([['/a/b', 'FS_NOT_DIRECTORY']]);
  });

  it.each([[{}], [{ force: true }]])('a path that now leads elsewhere in the lower is a conflict (options %o)', async (options) => {
    const { lower, fs } = await setup({ '/d/f': 'old', '/e': null });
    await write(fs, '/d/f', 'new');
    const vol = lower.provider.volume;
    vol.unlinkSync('/d/f');
    vol.rmdirSync('/d');
    vol.symlinkSync('/e', '/d');
    const result = await fs.commit(undefined, options);
    expect(result.overwritten).toEqual([]);
    expect(result.conflicts.map((c) => c.path)).toEqual(['/d/f']);
    expect(result.conflicts[0]!.message).toMatch(/now leads to "\/e\/f"/);
    expect(vol.readdirSync('/e')).toEqual([]);
  });

  it('an aborted commit stops with FS_ABORTED and commits nothing more', async () => {
    const { lower, fs } = await scenario();
    const controller = new AbortController();
    const seen: string[] = [];
    const err = await fs
      .commit(undefined, {
        signal: controller.signal,
        onProgress: (p) => {
          seen.push(p.path);
          controller.abort();
        },
      })
      .catch((e: unknown) => e);
    expect(isFsError(err, 'FS_ABORTED')).toBe(true);
    expect(seen).toEqual(['/src/b.ts']);
    expect((await fs.changes()).map((c) => c.path)).toEqual(['/docs/new.md', '/src/a.ts']);
    expect(await read(lower, '/src/a.ts')).toBe('one\ntwo\nthree\n');
  });

  it('discard drops changes so those paths show the lower again', async () => {
    const { lower, fs } = await scenario();
    await fs.discard(['/src/b.ts']);
    expect(await read(fs, '/src/b.ts')).toBe('bee\n');
    expect((await fs.changes()).map((c) => c.path)).toEqual(['/docs/new.md', '/src/a.ts']);
    await fs.discard(['/docs']);
    expect(await names(fs, '/')).toEqual(['keep.txt:file', 'src:directory']);
    await fs.discard();
    expect(await fs.changes()).toEqual([]);
    expect(await read(fs, '/src/a.ts')).toBe('one\ntwo\nthree\n');
    expect(lower.snapshot()).toEqual((await setup({ '/src/a.ts': 'one\ntwo\nthree\n', '/src/b.ts': 'bee\n', '/keep.txt': 'k\n' })).lower.snapshot());
  });

  it('selecting a path outside the root is refused', async () => {
    const root = createMemoryFs({ files: { '/r/a.txt': 'a' }, cwd: '/r' });
    const scoped: FileSystem = { ...root, root: '/r', resolve: (p, o) => root.resolve(p, o) };
    const fs = await createOverlayFs({ lower: scoped });
    expect(fs.root).toBe('/r');
    expect(await codeOf(fs.resolve('/etc/passwd'))).toBe('FS_OUTSIDE_ROOT');
    expect(await codeOf(fs.commit(['../x']))).toBe('FS_OUTSIDE_ROOT');
  });
});

describe('createOverlayFs arguments', () => {
  it('refuses bad options', async () => {
    const lower = createMemoryFs();
    expect(await codeOf(createOverlayFs({ lower: {} as MemoryFileSystem }))).toBe('FS_INVALID_ARGUMENT');
    expect(await codeOf(createOverlayFs({ lower, upper: createMemoryFs(), stateDir: '/tmp/x' }))).toBe('FS_INVALID_ARGUMENT');
    expect(await codeOf(createOverlayFs({ lower, upper: lower }))).toBe('FS_INVALID_ARGUMENT');
    expect(await codeOf(createOverlayFs({ lower, stateDir: '' }))).toBe('FS_INVALID_ARGUMENT');
  });

  it('keeps cwd and root of the lower', async () => {
    const lower = createMemoryFs({ cwd: '/work' });
    const fs: OverlayFileSystem = await createOverlayFs({ lower });
    expect(fs.cwd).toBe('/work');
    await fs.writeText(await fs.resolve('rel.txt'), 'r');
    expect((await fs.changes()).map((c) => c.path)).toEqual(['/work/rel.txt']);
    expect(text((await fs.readBytes(await fs.resolve('/work/rel.txt'), { maxBytes: 9 })).bytes)).toBe('r');
  });
});
