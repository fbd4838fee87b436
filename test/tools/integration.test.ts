import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type FsObservation, type HarnessContext, type ToolResult } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import {
  fsTools,
  moveDeleteTools,
  type DeleteValue,
  type EditValue,
  type ListValue,
  type MoveValue,
  type ReadImageValue,
  type ReadValue,
  type WriteValue,
} from '../../src/tools/index.js';
import { png } from './images.js';
import { localSubject, memorySubject, overlaySubject, type SubjectFactory, type ToolSubject } from './subjects.js';
import { postgresToolSubjects } from '../postgres/tool-subjects.js';
import { sqliteToolSubject } from '../sqlite/tool-subjects.js';

/** Every provider the tools must behave identically over; adding one is one line. */
const SUBJECTS: readonly SubjectFactory[] = [memorySubject, localSubject, overlaySubject, ...postgresToolSubjects, sqliteToolSubject];

const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8'));

describe.each(SUBJECTS)('tools over $name', (factory) => {
  let s: ToolSubject;
  let ctx: HarnessContext;
  let listenerErrors: unknown[];
  let p: (name: string) => string;

  beforeEach(async () => {
    s = await factory.create();
    listenerErrors = [];
    ctx = createHarness({
      fs: s.fs,
      cwd: s.base,
      plugins: [createObservationPolicy(), fsTools(), moveDeleteTools()],
      onListenerError: (err) => listenerErrors.push(err),
    });
    p = (name) => `${s.base}/${name}`;
  });
  afterEach(async () => {
    await s.cleanup?.();
  });

  const as = (owner: object | string) => ({
    read: (file_path: string, extra: { offset?: number; limit?: number } = {}) =>
      ctx.tools.execute('read', { file_path, ...extra }, { owner }) as Promise<ToolResult<ReadValue>>,
    write: (file_path: string, content: string) =>
      ctx.tools.execute('write', { file_path, content }, { owner }) as Promise<ToolResult<WriteValue>>,
    edit: (file_path: string, old_string: string, new_string: string, replace_all?: boolean) =>
      ctx.tools.execute('edit', { file_path, old_string, new_string, ...(replace_all === undefined ? {} : { replace_all }) }, {
        owner,
      }) as Promise<ToolResult<EditValue>>,
  });
  const more = (owner: object | string) => ({
    list: (path: string, ignore?: string[]) =>
      ctx.tools.execute('list', { path, ...(ignore ? { ignore } : {}) }, { owner }) as Promise<ToolResult<ListValue>>,
    move: (from_path: string, to_path: string) => ctx.tools.execute('move', { from_path, to_path }, { owner }) as Promise<ToolResult<MoveValue>>,
    del: (file_path: string) => ctx.tools.execute('delete', { file_path }, { owner }) as Promise<ToolResult<DeleteValue>>,
  });
  const alice = as({ session: 'alice' });
  const bob = as('bob');

  const expectOk = <V>(r: ToolResult<V>): V => {
    expect(r, r.text).toMatchObject({ isError: false });
    return r.value as V;
  };
  const expectError = (r: ToolResult, code: string) => {
    expect(r.isError, r.text).toBe(true);
    expect(r.error).toEqual({ name: 'FsError', code });
    expect(r.text.startsWith('Error: ')).toBe(true);
  };

  it('creates a new file blind', async () => {
    const r = await alice.write(p('new.txt'), 'hello\n');
    expect(expectOk(r)).toMatchObject({ operation: 'create', bytes: 6, path: p('new.txt') });
    expect(r.text).toBe(`Created "${p('new.txt')}" (6 bytes).`);
    expect(text(await s.read(p('new.txt')))).toBe('hello\n');
  });

  it('needs a read before overwriting an existing file', async () => {
    await s.write(p('a.txt'), 'one\n');
    const refused = await alice.write(p('a.txt'), 'two\n');
    expectError(refused, 'FS_NOT_OBSERVED');
    expect(refused.text).toContain('— read the file first, then retry');
    expect(text(await s.read(p('a.txt')))).toBe('one\n');

    expectOk(await alice.read(p('a.txt')));
    expect(expectOk(await alice.write(p('a.txt'), 'two\n')).operation).toBe('update');
    expect(text(await s.read(p('a.txt')))).toBe('two\n');
  });

  it('refuses an edit of a file never read, and of one last seen absent', async () => {
    await s.write(p('a.txt'), 'one\n');
    const unseen = await alice.edit(p('a.txt'), 'one', 'two');
    expectError(unseen, 'FS_NOT_OBSERVED');
    expect(unseen.text).toContain('— read the file first, then retry');

    expectError(await alice.read(p('missing.txt')), 'FS_NOT_FOUND');
    await s.write(p('missing.txt'), 'one\n');
    expectError(await alice.edit(p('missing.txt'), 'one', 'two'), 'FS_NOT_FOUND');
    expect(text(await s.read(p('a.txt')))).toBe('one\n');
    expect(text(await s.read(p('missing.txt')))).toBe('one\n');
  });

  it('makes write and edit stale after a same-size, same-tick change by another writer', async () => {
    await s.write(p('a.txt'), 'alpha\n');
    expectOk(await alice.read(p('a.txt')));
    await s.write(p('a.txt'), 'bravo\n', { keepMtime: true });

    const w = await alice.write(p('a.txt'), 'mine\n');
    expectError(w, 'FS_STALE_VERSION');
    expect(w.text).toMatch(/ — re-read the file, then retry$/);
    // The guard is checked before matching: text that matches the new content is still refused.
    expectError(await alice.edit(p('a.txt'), 'bravo', 'mine'), 'FS_STALE_VERSION');
    const e = await alice.edit(p('a.txt'), 'alpha', 'mine');
    expectError(e, 'FS_STALE_VERSION');
    expect(e.text).toMatch(new RegExp(`^Error: cannot edit ".*a\\.txt": .* — re-read the file, then retry$`));
    expect(text(await s.read(p('a.txt')))).toBe('bravo\n');

    expectOk(await alice.read(p('a.txt')));
    expectOk(await alice.edit(p('a.txt'), 'bravo', 'mine'));
    expect(text(await s.read(p('a.txt')))).toBe('mine\n');
  });

  it('does not go stale when another writer rewrites identical bytes', async () => {
    await s.write(p('a.txt'), 'alpha\n');
    expectOk(await alice.read(p('a.txt')));
    await s.write(p('a.txt'), 'alpha\n');
    expectOk(await alice.edit(p('a.txt'), 'alpha', 'beta'));
    await s.write(p('a.txt'), 'beta\n');
    expectOk(await alice.write(p('a.txt'), 'gamma\n'));
    expect(text(await s.read(p('a.txt')))).toBe('gamma\n');
  });

  it('lets a windowed read authorise an edit anywhere in the file', async () => {
    await s.write(p('a.txt'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    const r = await alice.read(p('a.txt'), { offset: 9, limit: 1 });
    expect(expectOk(r).lines).toEqual([{ number: 9, text: 'line 9' }]);
    const e = await alice.edit(p('a.txt'), 'line 2\n', 'second\n');
    expect(expectOk(e)).toMatchObject({ replacements: 1, lines: [{ start: 2, end: 2 }] });
    expect(text(await s.read(p('a.txt')))).toContain('line 1\nsecond\nline 3\n');
  });

  it('needs no re-read after its own write or edit', async () => {
    expectOk(await alice.write(p('a.txt'), 'one two\n'));
    expectOk(await alice.edit(p('a.txt'), 'one', '1'));
    expectOk(await alice.edit(p('a.txt'), 'two', '2'));
    expectOk(await alice.write(p('a.txt'), 'three\n'));
    expectOk(await alice.edit(p('a.txt'), 'three', '3'));
    expect(text(await s.read(p('a.txt')))).toBe('3\n');
  });

  it('keeps owners isolated', async () => {
    await s.write(p('a.txt'), 'shared\n');
    expectOk(await alice.read(p('a.txt')));
    expectError(await bob.write(p('a.txt'), 'bob\n'), 'FS_NOT_OBSERVED');
    expectError(await bob.edit(p('a.txt'), 'shared', 'bob'), 'FS_NOT_OBSERVED');
    expectOk(await alice.edit(p('a.txt'), 'shared', 'alice'));
    // A different object with the same shape is a different owner.
    expectError(await as({ session: 'alice' }).edit(p('a.txt'), 'alice', 'clone'), 'FS_NOT_OBSERVED');
    expect(text(await s.read(p('a.txt')))).toBe('alice\n');

    expectOk(await bob.read(p('a.txt')));
    expectOk(await bob.edit(p('a.txt'), 'alice', 'bob'));
    // Bob's edit made Alice's observation stale.
    expectError(await alice.edit(p('a.txt'), 'bob', 'alice again'), 'FS_STALE_VERSION');
    expect(text(await s.read(p('a.txt')))).toBe('bob\n');
  });

  it('recreates a deleted file after a re-read', async () => {
    await s.write(p('a.txt'), 'old\n');
    expectOk(await alice.read(p('a.txt')));
    await s.remove(p('a.txt'));
    expectError(await alice.write(p('a.txt'), 'new\n'), 'FS_STALE_VERSION');
    expectError(await alice.edit(p('a.txt'), 'old', 'new'), 'FS_STALE_VERSION');
    expect(await s.read(p('a.txt'))).toBeUndefined();

    expectError(await alice.read(p('a.txt')), 'FS_NOT_FOUND');
    expect(expectOk(await alice.write(p('a.txt'), 'new\n')).operation).toBe('create');
    expect(text(await s.read(p('a.txt')))).toBe('new\n');
  });

  it('does not let a throwing fs/observed listener fail a committed write', async () => {
    ctx.events.on('fs/observed', () => {
      throw new Error('recorder is broken');
    });
    ctx.events.on('fs/observed', () => Promise.reject(new Error('async recorder is broken')));
    const r = await alice.write(p('a.txt'), 'kept\n');
    expect(expectOk(r).operation).toBe('create');
    expect(text(await s.read(p('a.txt')))).toBe('kept\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(listenerErrors.map((e) => (e as Error).message).sort()).toEqual(['async recorder is broken', 'recorder is broken']);
    // The policy's own recorder still ran: the write counts as an observation.
    expectOk(await alice.edit(p('a.txt'), 'kept', 'edited'));
  });

  it('lets one of two owners editing one file concurrently win, and loses nothing', async () => {
    await s.write(p('a.txt'), 'a\nb\n');
    expectOk(await alice.read(p('a.txt')));
    expectOk(await bob.read(p('a.txt')));
    const [ra, rb] = await Promise.all([alice.edit(p('a.txt'), 'a\n', 'A\n'), bob.edit(p('a.txt'), 'b\n', 'B\n')]);
    const results = [ra, rb];
    expect(results.filter((r) => !r.isError)).toHaveLength(1);
    const loser = results.find((r) => r.isError)!;
    expectError(loser, 'FS_STALE_VERSION');
    const winnerIsAlice = !ra.isError;
    expect(text(await s.read(p('a.txt')))).toBe(winnerIsAlice ? 'A\nb\n' : 'a\nB\n');

    const retry = winnerIsAlice ? bob : alice;
    expectOk(await retry.read(p('a.txt')));
    expectOk(await (winnerIsAlice ? retry.edit(p('a.txt'), 'b\n', 'B\n') : retry.edit(p('a.txt'), 'a\n', 'A\n')));
    expect(text(await s.read(p('a.txt')))).toBe('A\nB\n');
  });

  it('lets only one of two concurrent writes from the same base version land', async () => {
    await s.write(p('a.txt'), 'base\n');
    expectOk(await alice.read(p('a.txt')));
    expectOk(await bob.read(p('a.txt')));
    const results = await Promise.all([alice.write(p('a.txt'), 'from alice\n'), bob.write(p('a.txt'), 'from bob\n')]);
    expect(results.filter((r) => r.isError).map((r) => r.error?.code)).toEqual(['FS_STALE_VERSION']);
    const winner = results.findIndex((r) => !r.isError);
    expect(text(await s.read(p('a.txt')))).toBe(winner === 0 ? 'from alice\n' : 'from bob\n');
  });

  it('reports edit results with counts and line numbers, and E3 errors', async () => {
    await s.write(p('a.txt'), 'x\ny\nx\ny\nx\n');
    expectOk(await alice.read(p('a.txt')));
    const ambiguous = await alice.edit(p('a.txt'), 'x', 'z');
    expectError(ambiguous, 'FS_AMBIGUOUS_EDIT');
    expect(ambiguous.text).toContain('3 times');
    expect(ambiguous.text).toContain('1, 3, 5');
    const missing = await alice.edit(p('a.txt'), 'nothing like it', 'z');
    expectError(missing, 'FS_EDIT_NOT_FOUND');
    const all = await alice.edit(p('a.txt'), 'x', 'z', true);
    expect(expectOk(all)).toMatchObject({ replacements: 3, replaceAll: true });
    expect(all.text).toBe(`Edited "${p('a.txt')}": 3 replacements; changed lines 1, 3, 5.`);
    expect(text(await s.read(p('a.txt')))).toBe('z\ny\nz\ny\nz\n');
  });

  it('keeps CRLF and the BOM through read, write and edit', async () => {
    await s.write(p('a.txt'), '\uFEFFone\r\ntwo\r\n');
    const r = expectOk(await alice.read(p('a.txt')));
    expect(r.lines.map((l) => l.text)).toEqual(['one', 'two']);
    expect(r.bom).toBe(true);
    expectOk(await alice.edit(p('a.txt'), 'one\ntwo', 'uno\ndos'));
    expect(text(await s.read(p('a.txt')))).toBe('\uFEFFuno\r\ndos\r\n');
    expectOk(await alice.write(p('a.txt'), 'tres\ncuatro\n'));
    expect(text(await s.read(p('a.txt')))).toBe('\uFEFFtres\r\ncuatro\r\n');
  });

  it('turns the arguments into ctx.fs calls and fs/* events', async () => {
    const events: string[] = [];
    const bare = createHarness({ fs: s.fs, cwd: s.base, plugins: [fsTools()] });
    bare.events.decide('fs/write-intent', (target, owner) => {
      events.push(`write-intent ${target.displayPath} ${String(owner)}`);
      return undefined;
    });
    bare.events.decide('fs/edit-intent', (target, owner) => {
      events.push(`edit-intent ${target.displayPath} ${String(owner)}`);
      return undefined;
    });
    const observed: FsObservation[] = [];
    bare.events.on('fs/observed', (target, o, owner) => {
      events.push(`observed ${target.displayPath} ${o.kind} ${String(owner)}`);
      observed.push(o);
    });
    const run = (name: string, args: object) => bare.tools.execute(name, args, { owner: 'o' });

    const w = await run('write', { file_path: 'rel.txt', content: 'v1\n' });
    const e = await run('edit', { file_path: p('rel.txt'), old_string: 'v1', new_string: 'v2' });
    const r = await run('read', { file_path: 'rel.txt' });
    await run('read', { file_path: 'none.txt' });
    await run('edit', { file_path: 'rel.txt', old_string: 'absent text', new_string: 'x' });
    expect(events).toEqual([
      `write-intent ${p('rel.txt')} o`,
      `observed ${p('rel.txt')} present o`,
      `edit-intent ${p('rel.txt')} o`,
      `observed ${p('rel.txt')} present o`,
      `observed ${p('rel.txt')} present o`,
      `observed ${p('none.txt')} absent o`,
      // The failed edit asked for its guard and recorded nothing.
      `edit-intent ${p('rel.txt')} o`,
    ]);
    expect(observed.slice(0, 3)).toEqual([
      { kind: 'present', version: (w.value as WriteValue).version },
      { kind: 'present', version: (e.value as EditValue).version },
      { kind: 'present', version: (r.value as ReadValue).version },
    ]);
    expect((e.value as EditValue).version).toBe((r.value as ReadValue).version);
  });

  it('writes and edits unconditionally without the policy', async () => {
    const bare = createHarness({ fs: s.fs, cwd: s.base, plugins: [fsTools()] });
    await s.write(p('a.txt'), 'one\n');
    const run = (name: string, args: object) => bare.tools.execute(name, args, { owner: 'anyone' });
    expect((await run('edit', { file_path: p('a.txt'), old_string: 'one', new_string: 'two' })).isError).toBe(false);
    expect((await run('write', { file_path: p('a.txt'), content: 'three\n' })).isError).toBe(false);
    expect(text(await s.read(p('a.txt')))).toBe('three\n');
  });

  it('refuses non-files and non-text without recording them', async () => {
    await s.write(p('dir/inner.txt'), 'x\n');
    await s.write(p('bin.dat'), new Uint8Array([0x61, 0x00, 0x62]));
    expectError(await alice.read(p('dir')), 'FS_NOT_REGULAR_FILE');
    const bin = await alice.read(p('bin.dat'));
    expectError(bin, 'FS_NOT_TEXT');
    expect(bin.text).toContain('NUL');
    expectError(await alice.write(p('bin.dat'), 'text now\n'), 'FS_NOT_OBSERVED');
    expect(await s.read(p('bin.dat'))).toEqual(new Uint8Array([0x61, 0x00, 0x62]));
  });

  it('stops before any I/O when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const r = await ctx.tools.execute('write', { file_path: p('a.txt'), content: 'x' }, { owner: 'o', signal: controller.signal });
    expectError(r, 'FS_ABORTED');
    expect(await s.read(p('a.txt'))).toBeUndefined();
  });

  it('shares one observation between two paths to one file', async (t) => {
    if (!s.symlink) return t.skip();
    await s.write(p('real.txt'), 'one\n');
    await s.symlink(p('real.txt'), p('link.txt'));
    expectOk(await alice.read(p('link.txt')));
    expectOk(await alice.edit(p('real.txt'), 'one', 'two'));
    expectOk(await alice.edit(p('link.txt'), 'two', 'three'));
    expect(text(await s.read(p('real.txt')))).toBe('three\n');
    expectError(await bob.write(p('real.txt'), 'bob\n'), 'FS_NOT_OBSERVED');
  });

  it('lists a tree, directories first, honouring .gitignore, showing dangling links as other', async () => {
    await s.write(p('.gitignore'), 'dist/\n');
    await s.write(p('dist/bundle.js'), 'x');
    await s.write(p('src/a.ts'), 'aa');
    await s.write(p('README.md'), 'r');
    // In the base directory, which every subject's lower layer has.
    if (s.symlink) await s.symlink(p('missing'), p('broken'));
    const r = await more('o').list(s.base);
    const v = expectOk(r);
    expect(v.entries.map((e) => [e.path, e.type])).toEqual([
      ['src', 'directory'],
      ['src/a.ts', 'file'],
      ['.gitignore', 'file'],
      ['README.md', 'file'],
      ...(s.symlink ? [['broken', 'other']] : []),
    ]);
    expect(v.ignored).toBe(1);
    expect(r.text).toContain('    a.ts (2 B)');
  });

  it('reads a PNG as an image and lets the session overwrite it without a re-read', async () => {
    await s.write(p('img.bin'), png(2, 5));
    const v = expectOk(await alice.read(p('img.bin'))) as unknown as ReadImageValue;
    expect(v).toMatchObject({ type: 'image', mediaType: 'image/png', width: 2, height: 5 });
    expectOk(await alice.write(p('img.bin'), 'replaced\n'));
    expect(text(await s.read(p('img.bin')))).toBe('replaced\n');
  });

  it('deletes only a file read at its current version', async () => {
    await s.write(p('d.txt'), 'one\n');
    expectError(await more(alice).del(p('d.txt')), 'FS_NOT_OBSERVED');
    expectOk(await alice.read(p('d.txt')));
    await s.write(p('d.txt'), 'two\n');
    expectError(await more({ session: 'alice' }).del(p('d.txt')), 'FS_NOT_OBSERVED'); // another object, another session
    const aliceOwner = { session: 'alice' };
    const a = as(aliceOwner);
    expectOk(await a.read(p('d.txt')));
    await s.write(p('d.txt'), 'three\n');
    expectError(await more(aliceOwner).del(p('d.txt')), 'FS_STALE_VERSION');
    expectOk(await a.read(p('d.txt')));
    expect(expectOk(await more(aliceOwner).del(p('d.txt'))).bytes).toBe(6);
    expect(await s.read(p('d.txt'))).toBeUndefined();
  });

  it('moves an unread file, refuses an unread destination, replaces a read one', async () => {
    await s.write(p('m/a.txt'), 'A\n');
    await s.write(p('m/b.txt'), 'B\n');
    const owner = { session: 'mover' };
    const m = more(owner);
    expectError(await m.move(p('m/a.txt'), p('m/b.txt')), 'FS_NOT_OBSERVED');
    expectOk(await as(owner).read(p('m/b.txt')));
    expect(expectOk(await m.move(p('m/a.txt'), p('m/b.txt'))).replaced).toBe(true);
    expect(text(await s.read(p('m/b.txt')))).toBe('A\n');
    expect(await s.read(p('m/a.txt'))).toBeUndefined();
    // The moved file is observed under its new name: an edit needs no read.
    expectOk(await as(owner).edit(p('m/b.txt'), 'A', 'AA'));
    expectOk(await m.move(p('m/b.txt'), p('n/deep/c.txt')));
    expect(text(await s.read(p('n/deep/c.txt')))).toBe('AA\n');
  });

  it('asks the remove and rename deciders and records what moved', async () => {
    const events: string[] = [];
    const bare = createHarness({ fs: s.fs, cwd: s.base, plugins: [fsTools(), moveDeleteTools()] });
    bare.events.decide('fs/remove-intent', (target, owner) => {
      events.push(`remove-intent ${target.displayPath} ${String(owner)}`);
      return undefined;
    });
    bare.events.decide('fs/rename-intent', (from, to, owner) => {
      events.push(`rename-intent ${from.displayPath} ${to.displayPath} ${String(owner)}`);
      return undefined;
    });
    bare.events.on('fs/observed', (target, o, owner) => {
      events.push(`observed ${target.displayPath} ${o.kind} ${String(owner)}`);
    });
    await s.write(p('e1.txt'), 'x');
    await s.write(p('e2.txt'), 'y');
    const run = (name: string, args: object) => bare.tools.execute(name, args, { owner: 'o' });
    expectOk(await run('move', { from_path: 'e1.txt', to_path: 'e3.txt' }));
    expectOk(await run('delete', { file_path: 'e2.txt' }));
    expect(events).toEqual([
      `rename-intent ${p('e1.txt')} ${p('e3.txt')} o`,
      `observed ${p('e1.txt')} absent o`,
      `observed ${p('e3.txt')} present o`,
      `remove-intent ${p('e2.txt')} o`,
      `observed ${p('e2.txt')} absent o`,
    ]);
  });

  it('puts a unified diff of each write and edit in the value', async () => {
    expect(expectOk(await alice.write(p('df.txt'), 'a\n')).diff).toBe(`--- /dev/null\n+++ ${p('df.txt')}\n@@ -0,0 +1,1 @@\n+a\n`);
    expect(expectOk(await alice.edit(p('df.txt'), 'a', 'b')).diff).toBe(`--- ${p('df.txt')}\n+++ ${p('df.txt')}\n@@ -1,1 +1,1 @@\n-a\n+b\n`);
  });

  it('resolves relative paths against the harness cwd or the call cwd', async () => {
    await s.write(p('sub/b.txt'), 'b\n');
    expectOk(await ctx.tools.execute('write', { file_path: 'rel.txt', content: 'r\n' }, { owner: 'o' }));
    expect(text(await s.read(p('rel.txt')))).toBe('r\n');
    const r = await ctx.tools.execute('read', { file_path: 'b.txt' }, { owner: 'o', cwd: p('sub') });
    expect((r.value as ReadValue).path).toBe(p('sub/b.txt'));
  });
});

describe('tools over an overlay', () => {
  it('go stale when the lower changes under a file that was read but not yet copied up, and leave the lower alone', async () => {
    const lower = createMemoryFs({ cwd: '/work', files: { 'a.txt': 'alpha\n' } });
    const fs = await createOverlayFs({ lower, cwd: '/work' });
    const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools()] });
    const run = (name: string, args: object) => ctx.tools.execute(name, args, { owner: 'o' });
    expect((await run('read', { file_path: 'a.txt' })).isError).toBe(false);
    lower.provider.volume.writeFileSync('/work/a.txt', 'bravo\n');
    expect((await run('edit', { file_path: 'a.txt', old_string: 'bravo', new_string: 'mine' })).error?.code).toBe('FS_STALE_VERSION');
    expect((await run('read', { file_path: 'a.txt' })).isError).toBe(false);
    expect((await run('edit', { file_path: 'a.txt', old_string: 'bravo', new_string: 'mine' })).isError).toBe(false);
    expect(String(lower.provider.volume.readFileSync('/work/a.txt'))).toBe('bravo\n');
    expect((await fs.readText(await fs.resolve('a.txt'))).text).toBe('mine\n');
  });
});
