import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { holdsMarkers, merge, resolveMarkers } from '../../src/review/index.js';
import { mergeText } from '../../src/review/merge-lines.js';

const lines = (n: number, tag = '') => Array.from({ length: n }, (_, i) => `line ${i + 1}${tag}\n`).join('');
const edit = (text: string, line: number, to: string) => text.split('\n').map((l, i) => (i === line - 1 ? to : l)).join('\n');

async function read(fs: OverlayFileSystem, path: string): Promise<string | undefined> {
  const target = await fs.resolve(path);
  if ((await fs.stat(target)) === undefined) return undefined;
  return Buffer.from((await fs.readBytes(target, { maxBytes: 1 << 20 })).bytes).toString('utf8');
}

async function write(fs: OverlayFileSystem, path: string, text: string): Promise<void> {
  await fs.writeBytes(await fs.resolve(path), Buffer.from(text));
}

async function sandbox() {
  const A = lines(80);
  const lower = createMemoryFs({ files: { '/p/a.txt': A, '/p/c.txt': 'c\n' } });
  const parent = await createOverlayFs({ lower, cwd: '/p' });
  return { A, lower, parent };
}

describe('merge of forks into their parent', () => {
  it('merges two compatible forks: both edits of a.txt, b.txt added, c.txt removed, as one checkpoint each', async () => {
    const { A, parent } = await sandbox();
    const one = await parent.fork();
    const two = await parent.fork();
    await write(one, '/p/a.txt', edit(A, 2, 'line 2 by one'));
    await write(one, '/p/b.txt', 'b\n');
    await write(two, '/p/a.txt', edit(A, 40, 'line 40 by two'));
    await two.remove(await two.resolve('/p/c.txt'));

    const before = parent.checkpoints().length;
    const r1 = await merge(parent, one);
    expect(r1).toEqual({ merged: ['/p/a.txt', '/p/b.txt'], conflicts: [], marked: [], applied: true });
    const r2 = await merge(parent, two);
    expect(r2).toEqual({ merged: ['/p/a.txt', '/p/c.txt'], conflicts: [], marked: [], applied: true });
    expect(parent.checkpoints().length).toBe(before + 2);
    expect(await read(parent, '/p/a.txt')).toBe(edit(edit(A, 2, 'line 2 by one'), 40, 'line 40 by two'));
    expect(await read(parent, '/p/b.txt')).toBe('b\n');
    expect(await read(parent, '/p/c.txt')).toBeUndefined();

    // One rewind takes a merge back whole.
    await parent.rewind(parent.checkpoints().at(-2)!.id);
    expect(await read(parent, '/p/c.txt')).toBe('c\n');
    expect(await read(parent, '/p/a.txt')).toBe(edit(A, 2, 'line 2 by one'));
  });

  it('reports an overlapping edit with base, ours and theirs, and changes nothing', async () => {
    const { A, parent } = await sandbox();
    const one = await parent.fork();
    const three = await parent.fork();
    await write(one, '/p/a.txt', edit(A, 2, 'line 2 by one'));
    await write(three, '/p/a.txt', edit(A, 2, 'line 2 by three'));
    await write(three, '/p/d.txt', 'd\n');
    await merge(parent, one);
    const checkpoints = parent.checkpoints().length;
    const r = await merge(parent, three);
    expect(r.applied).toBe(false);
    expect(r.merged).toEqual(['/p/a.txt', '/p/d.txt'].filter((p) => p !== '/p/a.txt'));
    expect(r.conflicts).toEqual([
      {
        path: '/p/a.txt',
        kind: 'content',
        message: '1 overlapping edit',
        regions: [{ base: 'line 2\n', ours: 'line 2 by one\n', theirs: 'line 2 by three\n', baseStart: 2, oursStart: 2, theirsStart: 2 }],
      },
    ]);
    expect(parent.checkpoints().length).toBe(checkpoints);
    expect(await read(parent, '/p/d.txt')).toBeUndefined();
  });

  it('with markers writes the conflict into the file, which commit then refuses until the markers are gone', async () => {
    const { A, lower, parent } = await sandbox();
    const one = await parent.fork();
    const three = await parent.fork();
    await write(one, '/p/a.txt', edit(A, 2, 'line 2 by one'));
    await write(three, '/p/a.txt', edit(A, 2, 'line 2 by three'));
    await write(three, '/p/d.txt', 'd\n');
    await merge(parent, one);
    const r = await merge(parent, three, { markers: true });
    expect(r).toMatchObject({ merged: ['/p/d.txt'], marked: ['/p/a.txt'], applied: true });
    const text = (await read(parent, '/p/a.txt'))!;
    expect(text).toContain('<<<<<<< parent\nline 2 by one\n||||||| base\nline 2\n=======\nline 2 by three\n>>>>>>> fork\n');
    expect(holdsMarkers(Buffer.from(text))).toBe(true);
    expect(resolveMarkers(text, 'ours')).toBe(edit(A, 2, 'line 2 by one'));
    expect(resolveMarkers(text, 'theirs')).toBe(edit(A, 2, 'line 2 by three'));

    const refused = await parent.commit();
    expect(refused.committed).toEqual(['/p/d.txt']);
    expect(refused.conflicts.map((c) => [c.path, c.code])).toEqual([['/p/a.txt', 'FS_CONFLICT']]);
    expect(Buffer.from((await lower.readBytes(await lower.resolve('/p/a.txt'), { maxBytes: 1 << 20 })).bytes).toString()).toBe(A);
    // Also with force.
    expect((await parent.commit(undefined, { force: true })).committed).toEqual([]);

    await write(parent, '/p/a.txt', resolveMarkers(text, 'theirs'));
    expect((await parent.commit()).committed).toEqual(['/p/a.txt']);
  });

  it('reports delete against modify, file against directory and binary on both sides', async () => {
    const lower = createMemoryFs({ files: { '/x.txt': 'x\n', '/y': 'y\n', '/bin': new Uint8Array([0, 1]) } });
    const parent = await createOverlayFs({ lower });
    const fork = await parent.fork();
    await parent.remove(await parent.resolve('/x.txt'));
    await write(fork, '/x.txt', 'x2\n');
    await write(parent, '/y', 'y2\n');
    await fork.remove(await fork.resolve('/y'));
    await write(fork, '/y/z', 'z\n');
    await parent.writeBytes(await parent.resolve('/bin'), new Uint8Array([0, 2]));
    await fork.writeBytes(await fork.resolve('/bin'), new Uint8Array([0, 3]));
    const r = await merge(parent, fork);
    expect(r.applied).toBe(false);
    expect(r.conflicts.map((c) => [c.path, c.kind])).toEqual([
      ['/bin', 'binary'],
      ['/x.txt', 'delete-modify'],
      ['/y', 'type'],
      ['/y/z', 'type'],
    ]);
  });

  it('takes one side\'s executable bit, symlink and new directory', async () => {
    const lower = createMemoryFs({ files: { '/run.sh': 'echo\n' } });
    const parent = await createOverlayFs({ lower });
    const fork = await parent.fork();
    await fork.setExecutable!(await fork.resolve('/run.sh'), true);
    await fork.symlink!(await fork.resolve('/link', { noFollow: true }), 'run.sh');
    await fork.mkdir(await fork.resolve('/empty'));
    const r = await merge(parent, fork);
    expect(r).toEqual({ merged: ['/empty', '/link', '/run.sh'], conflicts: [], marked: [], applied: true });
    expect((await parent.stat(await parent.resolve('/run.sh')))?.executable).toBe(true);
    expect(await parent.readlink!(await parent.resolve('/link', { noFollow: true }))).toBe('run.sh');
    expect((await parent.stat(await parent.resolve('/empty')))?.type).toBe('directory');
  });

  it('refuses what is no fork, and a dry run changes nothing', async () => {
    const { A, parent } = await sandbox();
    const other = await createOverlayFs({ lower: createMemoryFs({ files: { '/p/a.txt': A } }) });
    await expect(merge(parent, other)).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    await expect(merge(parent, parent)).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    const fork = await parent.fork();
    await write(fork, '/p/b.txt', 'b\n');
    expect(await merge(parent, fork, { dryRun: true })).toEqual({ merged: ['/p/b.txt'], conflicts: [], marked: [], applied: false });
    expect(await read(parent, '/p/b.txt')).toBeUndefined();
  });

  it('does not overwrite a parent path that changed while the merge was computed', async () => {
    const { parent } = await sandbox();
    const fork = await parent.fork();
    await write(fork, '/p/c.txt', 'c by fork\n');
    // The parent changes c.txt after the merge read it, before it publishes (through the batch's own call).
    const applyChanges = parent.applyChanges!.bind(parent);
    parent.applyChanges = async (changes, options) => {
      await write(parent, '/p/c.txt', 'c by someone\n');
      return applyChanges(changes, options);
    };
    const r = await merge(parent, fork);
    expect(r).toEqual({ merged: [], conflicts: [expect.objectContaining({ path: '/p/c.txt', kind: 'changed' })], marked: [], applied: false });
    expect(await read(parent, '/p/c.txt')).toBe('c by someone\n');
  });
});

describe('line-level merge: what a line is (the seam\'s rule, not node-diff3\'s)', () => {
  const m = (base: string | undefined, ours: string, theirs: string) => mergeText(base === undefined ? undefined : Buffer.from(base), Buffer.from(ours), Buffer.from(theirs));
  const text = (r: ReturnType<typeof m>) => (r.ok ? Buffer.from(r.bytes).toString() : undefined);

  it('given strings, node-diff3 splits at whitespace: the merge gives it lines, so line breaks survive', async () => {
    const { merge: wordMerge } = await import('node-diff3');
    expect(wordMerge('a b\nc\n', 'a b\nc\n', 'a b\nc\nd\n').result).toEqual(['a', 'b', 'c', 'd', '']);
    expect(text(m('a b\nc\n', 'a b\nc\n', 'a b\nc\nd\n'))).toBe('a b\nc\nd\n');
  });

  it('keeps CRLF lines, and a CRLF-to-LF change of a line is a change of that line', () => {
    expect(text(m('a\r\nb\r\nc\r\n', 'A\r\nb\r\nc\r\n', 'a\r\nb\r\nC\r\n'))).toBe('A\r\nb\r\nC\r\n');
    expect(m('a\r\nb\r\n', 'a\nb\r\n', 'A\r\nb\r\n').ok).toBe(false);
    // A lone CR is part of its line (L3).
    expect(text(m('a\rb\nm\nc\n', 'a\rB\nm\nc\n', 'a\rb\nm\nC\n'))).toBe('a\rB\nm\nC\n');
  });

  it('a missing final line break is part of the last line', () => {
    expect(text(m('a\nm\nb', 'A\nm\nb', 'a\nm\nb\n'))).toBe('A\nm\nb\n');
    const r = m('a\nb', 'a\nB', 'a\nb\n');
    expect(r.ok).toBe(false);
    // The marker block closes each side's last line so every marker starts a line.
    expect(!r.ok && Buffer.from(r.withMarkers).toString()).toBe('a\n<<<<<<< parent\nB\n||||||| base\nb\n=======\nb\n>>>>>>> fork\n');
  });

  it('a UTF-8 BOM is not a line: one side adding it is a change that merges with the other\'s edits', () => {
    expect(text(m('a\nb\n', '\uFEFFa\nb\n', 'a\nB\n'))).toBe('\uFEFFa\nB\n');
    expect(text(m('\uFEFFa\nb\n', 'a\nb\n', '\uFEFFA\nb\n'))).toBe('A\nb\n');
  });

  it('writes markers with the file\'s own line break', () => {
    const r = m('a\r\n', 'b\r\n', 'c\r\n');
    expect(!r.ok && Buffer.from(r.withMarkers).toString()).toBe('<<<<<<< parent\r\nb\r\n||||||| base\r\na\r\n=======\r\nc\r\n>>>>>>> fork\r\n');
    expect(holdsMarkers(r.ok ? new Uint8Array() : r.withMarkers)).toBe(true);
  });
});
