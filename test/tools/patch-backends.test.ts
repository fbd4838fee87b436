import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsError, createHarness, type FileSystem, type ToolResult } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, patchTools, type PatchValue } from '../../src/tools/index.js';
import { localSubject, memorySubject, overlaySubject, type SubjectFactory, type ToolSubject } from './subjects.js';
import { postgresToolSubjects } from '../postgres/tool-subjects.js';
import { sqliteToolSubject } from '../sqlite/tool-subjects.js';

const SUBJECTS: readonly SubjectFactory[] = [memorySubject, localSubject, overlaySubject, ...postgresToolSubjects, sqliteToolSubject];
const P = (...lines: string[]) => `*** Begin Patch\n${lines.join('\n')}\n*** End Patch\n`;
const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString('utf8'));

/** Fails the `n`-th mutating call (writeBytes, remove, rename) made through it. */
function failingAt(fs: FileSystem, n: number): FileSystem {
  let calls = 0;
  return new Proxy(fs, {
    get(t, p, r) {
      const v = Reflect.get(t, p, r);
      // Without a batch: the changes go one by one, so a failure part-way is rolled back.
          if (p === 'applyChanges') return undefined;
          if (typeof v !== 'function') return v;
      if (p !== 'writeBytes' && p !== 'remove' && p !== 'rename') return v.bind(t);
      return async (...args: unknown[]) => {
        if (++calls === n) throw new FsError('FS_IO_ERROR', 'injected failure');
        return v.apply(t, args);
      };
    },
  });
}

describe.each(SUBJECTS)('apply_patch over $name', (factory) => {
  let s: ToolSubject;
  beforeEach(async () => {
    s = await factory.create();
  });
  afterEach(async () => {
    await s.cleanup?.();
  });

  const setup = async (fs: FileSystem) => {
    const ctx = createHarness({ fs, cwd: s.base, plugins: [createObservationPolicy(), fsTools(), patchTools()] });
    await s.write(`${s.base}/a.txt`, 'alpha\r\nbeta\r\n');
    await s.write(`${s.base}/b.txt`, 'bee\n');
    await s.write(`${s.base}/c.txt`, 'one\ntwo\n');
    for (const f of ['a.txt', 'b.txt', 'c.txt']) await ctx.tools.execute('read', { file_path: f }, { owner: 'o' });
    return (input: string) => ctx.tools.execute('apply_patch', { input }, { owner: 'o' }) as Promise<ToolResult<PatchValue>>;
  };
  const state = async () => ({
    a: text(await s.read(`${s.base}/a.txt`)),
    b: text(await s.read(`${s.base}/b.txt`)),
    c: text(await s.read(`${s.base}/c.txt`)),
    n: text(await s.read(`${s.base}/dir/n.txt`)),
    m: text(await s.read(`${s.base}/m.txt`)),
  });
  const before = { a: 'alpha\r\nbeta\r\n', b: 'bee\n', c: 'one\ntwo\n', n: undefined, m: undefined };
  const good = [
    '*** Update File: a.txt', ' alpha', '-beta', '+BETA', '+gamma',
    '*** Delete File: b.txt',
    '*** Add File: dir/n.txt', '+new',
    '*** Update File: c.txt', '*** Move to: m.txt', '-two', '+TWO',
  ];

  it('a bad hunk in the last file changes nothing anywhere', async () => {
    const patch = await setup(s.fs);
    const r = await patch(P(...good, '*** Update File: b.txt', '-not there', '+x'));
    // b.txt is both deleted and updated: refused before any check of content.
    expect(r.isError).toBe(true);
    const r2 = await patch(P(...good.slice(0, 8), '*** Update File: c.txt', '@@', '-one', '+1', '@@', '-missing', '+x'));
    expect(r2.isError && r2.error.code).toBe('FS_EDIT_NOT_FOUND');
    expect(r2.text).toMatch(/cannot update "\/[^"]*\/c\.txt": hunk 2 \(patch line \d+\): .* not found.*\(file 4 of 4, patch line \d+\); nothing was changed/);
    expect(await state()).toEqual(before);
  });

  it('applies a multi-file patch, keeping CRLF', async () => {
    const patch = await setup(s.fs);
    const r = await patch(P(...good));
    expect(r.isError, r.text).toBe(false);
    expect(await state()).toEqual({ a: 'alpha\r\nBETA\r\ngamma\r\n', b: undefined, c: undefined, n: 'new\n', m: 'one\nTWO\n' });
  });

  it('another writer changes the last file between the check and the publish: nothing changes anywhere', async () => {
    const racing = new Proxy(s.fs, {
      get(t, p, r) {
        const v = Reflect.get(t, p, r);
        if (p !== 'applyChanges' || typeof v !== 'function') return typeof v === 'function' ? v.bind(t) : v;
        return async (...args: unknown[]) => {
          await s.write(`${s.base}/c.txt`, 'theirs\n');
          return v.apply(t, args);
        };
      },
    });
    const patch = await setup(racing);
    const r = await patch(P(...good));
    expect(r.isError && r.error.code).toBe('FS_STALE_VERSION');
    expect(r.text).toMatch(/"[^"]*\/c\.txt" \(file 4 of 4\).*nothing was changed/);
    expect(await state()).toEqual({ ...before, c: 'theirs\n' });
  });

  it('without a batch, a failure at any write while publishing leaves every file as it was', async () => {
    for (let n = 1; n <= 5; n++) {
      const patch = await setup(failingAt(s.fs, n));
      const r = await patch(P(...good));
      expect(r.isError && r.text, `write ${n}`).toMatch(/injected failure; nothing was changed/);
      expect(await state(), `write ${n}`).toEqual(before);
    }
  });
});
