import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FsError, createHarness, type FileSystem, type ToolResult } from '../../src/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, moveDeleteTools, parsePatch, patchTools, type PatchValue } from '../../src/tools/index.js';
import { applyHunks } from '../../src/tools/patch/apply.js';
import { CODEX_SCENARIOS } from './patch-codex-scenarios.js';

const P = (...lines: string[]) => `*** Begin Patch\n${lines.join('\n')}\n*** End Patch\n`;
const code = (r: ToolResult) => (r.isError ? r.error.code : 'ok');

/** Every file under the working directory, path → text. */
async function tree(fs: FileSystem, dir = '/w'): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const e of fs.walk(await fs.resolve(dir))) {
    if (e.type === 'file') out[e.path] = (await fs.readText(e.target)).text;
  }
  return out;
}

function harness(files: Record<string, string | Uint8Array>, wrap: (fs: FileSystem) => FileSystem = (fs) => fs) {
  const base = createMemoryFs({ cwd: '/w', files: Object.fromEntries(Object.entries(files).map(([k, v]) => [`/w/${k}`, v])) });
  const fs = wrap(base);
  const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools(), moveDeleteTools(), patchTools()] });
  const run = (name: string, args: object, owner = 's') => ctx.tools.execute(name, args, { owner });
  return {
    fs: base,
    read: (p: string, owner?: string) => run('read', { file_path: p }, owner),
    patch: (input: string, owner?: string) => run('apply_patch', { input }, owner) as Promise<ToolResult<PatchValue>>,
    tree: () => tree(base),
    bytes: async (p: string) => (await base.readBytes(await base.resolve(`/w/${p}`), { maxBytes: 1 << 20 })).bytes,
  };
}

describe('apply_patch: Codex scenarios (as data)', () => {
  for (const s of CODEX_SCENARIOS) {
    it(s.name, async () => {
      const h = harness(s.input);
      for (const path of Object.keys(s.input)) await h.read(path); // the model read what it patches
      const r = await h.patch(s.patch);
      expect(r.isError, r.text).toBe(s.fails);
      if (r.isError) expect(r.text).toMatch(/nothing was changed|invalid patch/);
      expect(await h.tree()).toEqual(s.ours?.expected ?? s.expected);
    });
  }
});

describe('apply_patch: the policy', () => {
  it('updates and deletes need a read by this owner; nothing is written otherwise', async () => {
    const h = harness({ 'a.txt': 'one\ntwo\n', 'b.txt': 'bee\n' });
    const patch = P('*** Update File: a.txt', '-two', '+TWO', '*** Delete File: b.txt');
    await h.read('a.txt');
    const r = await h.patch(patch);
    expect(code(r)).toBe('FS_NOT_OBSERVED');
    expect(r.text).toBe('Error: cannot delete "/w/b.txt": it has not been read in this session (file 2 of 2, patch line 5); nothing was changed — read the file first, then retry');
    expect(await h.tree()).toEqual({ 'a.txt': 'one\ntwo\n', 'b.txt': 'bee\n' });
    await h.read('b.txt');
    const ok = await h.patch(patch);
    expect(ok.text).toBe('Applied the patch to 2 files:\nM "/w/a.txt"\nD "/w/b.txt"');
    expect(await h.tree()).toEqual({ 'a.txt': 'one\nTWO\n' });
    // Its own change is an observation: a second patch needs no read.
    expect(code(await h.patch(P('*** Update File: a.txt', '-TWO', '+2')))).toBe('ok');
    expect(code(await h.patch(P('*** Update File: a.txt', '-2', '+3'), 'other'))).toBe('FS_NOT_OBSERVED');
  });

  it('refuses a stale read, and an Add over a file this owner never read', async () => {
    const h = harness({ 'a.txt': 'x\n', 'e.txt': 'exists\n' });
    await h.read('a.txt');
    await h.fs.writeText(await h.fs.resolve('/w/a.txt'), 'changed\n');
    const stale = await h.patch(P('*** Update File: a.txt', '-changed', '+y'));
    expect(code(stale)).toBe('FS_STALE_VERSION');
    const add = await h.patch(P('*** Add File: new.txt', '+n', '*** Add File: e.txt', '+overwritten'));
    expect(code(add)).toBe('FS_NOT_OBSERVED');
    expect(add.text).toContain('"/w/e.txt": the file exists and has not been read');
    expect(await h.tree()).toEqual({ 'a.txt': 'changed\n', 'e.txt': 'exists\n' });
  });

  it('moves onto an existing file only when this owner read it', async () => {
    const h = harness({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await h.read('a.txt');
    const patch = P('*** Update File: a.txt', '*** Move to: b.txt', '-a', '+A');
    expect(code(await h.patch(patch))).toBe('FS_NOT_OBSERVED');
    await h.read('b.txt');
    const r = await h.patch(patch);
    expect(r.text).toBe('Applied the patch to 1 file:\nR "/w/a.txt" → "/w/b.txt"');
    expect(await h.tree()).toEqual({ 'b.txt': 'A\n' });
  });

  it('refuses a patch that changes one file twice', async () => {
    const h = harness({ 'a.txt': 'a\n' });
    const r = await h.patch(P('*** Add File: n.txt', '+1', '*** Update File: a.txt', '*** Move to: n.txt', '-a', '+b'));
    expect(code(r)).toBe('FS_INVALID_ARGUMENT');
    expect(r.text).toContain('touches "/w/n.txt" twice');
  });
});

describe('apply_patch: matching', () => {
  const apply = (text: string, ...body: string[]) => {
    const [op] = parsePatch(P('*** Update File: f', ...body));
    return applyHunks(text, op!.kind === 'update' ? op!.hunks : [], 'f');
  };

  it('loosens in steps and says which step a hunk needed', () => {
    expect(apply('a  \nb\n', ' a', '-b', '+c')).toEqual({ text: 'a  \nc\n', loosened: [{ hunk: 1, level: 'trailing-whitespace' }] });
    expect(apply('  a\nb\n', ' a', '-b', '+c')).toEqual({ text: '  a\nc\n', loosened: [{ hunk: 1, level: 'trimmed' }] });
    expect(apply('say “hi” — now\nb\n', ' say "hi" - now', '-b', '+c')).toEqual({ text: 'say “hi” — now\nc\n', loosened: [{ hunk: 1, level: 'unicode' }] });
    expect(apply('a\nb\n', ' a', '-b', '+c')).toEqual({ text: 'a\nc\n', loosened: [] });
  });

  it('refuses context that matches twice unless a header line separates the matches', () => {
    const text = 'def f():\n  x = 1\ndef g():\n  x = 1\n';
    expect(() => apply(text, '-  x = 1', '+  x = 2')).toThrow(/hunk 1 \(patch line 3\): its lines match at line 2 and again at line 4/);
    try {
      apply(text, '-  x = 1', '+  x = 2');
    } catch (err) {
      expect((err as FsError).code).toBe('FS_AMBIGUOUS_EDIT');
    }
    expect(apply(text, '@@ def g():', '-  x = 1', '+  x = 2').text).toBe('def f():\n  x = 1\ndef g():\n  x = 2\n');
    // The header line repeated as the hunk's first context line still places it.
    expect(apply(text, '@@ def g():', ' def g():', '-  x = 1', '+  x = 2').text).toBe('def f():\n  x = 1\ndef g():\n  x = 2\n');
    // A header above both matches does not tell them apart.
    expect(() => apply('top\n' + text, '@@ top', '-  x = 1', '+  x = 2')).toThrow(/match at line 3 and again at line 5/);
  });

  it('keeps each line break, the BOM and a missing final break (property)', () => {
    const line = fc.stringMatching(/^[a-z ]{0,6}$/);
    fc.assert(
      fc.property(fc.array(fc.tuple(line, fc.constantFrom('\n', '\r\n')), { minLength: 1, maxLength: 8 }), fc.nat(), fc.boolean(), (rows, pick, final) => {
        const k = pick % rows.length;
        const lines = rows.map(([l], i) => `${l}#${i}`); // unique lines
        const text = rows.map(([, eol], i) => lines[i] + (i < rows.length - 1 || final ? eol : '')).join('');
        const r = apply(text, `-${lines[k]}`, '+NEW', '+NEW2');
        // Added lines take the replaced line's break; a last line without one, the line before's (else LF).
        const hasBreak = (i: number) => i < rows.length - 1 || final;
        const eol = hasBreak(k) ? rows[k]![1] : k > 0 ? rows[k - 1]![1] : '\n';
        const expected = rows
          .map(([, e], i) => {
            const brk = i < rows.length - 1 || final ? e : '';
            return i === k ? `NEW${eol}NEW2${brk || ''}` : lines[i] + brk;
          })
          .join('');
        expect(r.text).toBe(expected);
      }),
    );
  });

  it('applies a hunk cut from the file where it was cut, keeping context as the file spells it (property)', () => {
    const row = fc.record({ pad: fc.constantFrom('', ' ', '\t '), op: fc.constantFrom('keep', 'delete', 'replace') });
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 12 }), fc.nat(), fc.nat(), (rows, a, b) => {
        const lines = rows.map((r, i) => `line ${i}${r.pad}`); // unique, some with trailing whitespace
        const from = a % rows.length;
        const to = from + 1 + (b % (rows.length - from));
        const body: string[] = [];
        const expected: string[] = lines.slice(0, from);
        for (let i = from; i < to; i++) {
          const { op } = rows[i]!;
          const bare = `line ${i}`; // the model's copy, without the trailing whitespace
          if (op === 'keep') (body.push(` ${bare}`), expected.push(lines[i]!));
          else body.push(`-${bare}`);
          if (op === 'replace') (body.push(`+new ${i}`), expected.push(`new ${i}`));
        }
        expected.push(...lines.slice(to));
        const r = apply(lines.map((l) => `${l}\n`).join(''), ...body);
        expect(r.text).toBe(expected.map((l) => `${l}\n`).join(''));
        const padded = rows.slice(from, to).some((x) => x.pad !== '');
        expect(r.loosened).toEqual(padded ? [{ hunk: 1, level: 'trailing-whitespace' }] : []);
      }),
    );
  });

  it('writes a BOM and CRLF file back with both', async () => {
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('one\r\ntwo\r\nthree')]);
    const h = harness({ 'w.txt': bom });
    await h.read('w.txt');
    expect(code(await h.patch(P('*** Update File: w.txt', ' one', '-two', '+2', '+2b', ' three')))).toBe('ok');
    expect(Buffer.from(await h.bytes('w.txt'))).toEqual(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('one\r\n2\r\n2b\r\nthree')]));
  });
});

/** A filesystem whose n-th mutation (writeBytes, remove, rename; 1-based) fails. */
function failingAt(n: number, count: { calls: number }) {
  return (fs: FileSystem): FileSystem =>
    new Proxy(fs, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        // Without a batch: the changes go one by one, so a failure part-way is rolled back.
        if (prop === 'applyChanges') return undefined;
        if (typeof value !== 'function') return value;
        if (prop !== 'writeBytes' && prop !== 'remove' && prop !== 'rename') return value.bind(target);
        return async (...args: unknown[]) => {
          if (++count.calls === n) throw new FsError('FS_IO_ERROR', 'injected failure');
          return value.apply(target, args);
        };
      },
    });
}

describe('apply_patch: a failure while publishing rolls back', () => {
  const files = { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd.txt': 'dest\n' };
  const patch = P(
    '*** Update File: a.txt', '-a', '+A',
    '*** Delete File: b.txt',
    '*** Add File: n/new.txt', '+new',
    '*** Update File: c.txt', '*** Move to: d.txt', '-c', '+C',
    '*** Add File: e.txt', '+e',
  );

  it('at every write, every file ends as it was', async () => {
    const dry = { calls: 0 };
    const ok = harness(files, failingAt(0, dry));
    for (const p of Object.keys(files)) await ok.read(p);
    expect(code(await ok.patch(patch))).toBe('ok');
    expect(await ok.tree()).toEqual({ 'a.txt': 'A\n', 'd.txt': 'C\n', 'n/new.txt': 'new\n', 'e.txt': 'e\n' });
    expect(dry.calls).toBe(6);
    for (let n = 1; n <= dry.calls; n++) {
      const h = harness(files, failingAt(n, { calls: 0 }));
      for (const p of Object.keys(files)) await h.read(p);
      const r = await h.patch(patch);
      expect(code(r), `failing write ${n}`).toBe('FS_IO_ERROR');
      expect(r.text).toMatch(/injected failure; nothing was changed/);
      expect(await h.tree(), `failing write ${n}`).toEqual(files);
      // The versions are back, so the owner's reads still hold: the same patch now applies.
      expect(code(await h.patch(patch)), `after failing write ${n}`).toBe('ok');
    }
  });

  it('another writer between the check and the publish: its bytes are kept, ours undone', async () => {
    let fired = false;
    let base: FileSystem | undefined;
    const h = harness(files, (fs) => {
      base = fs;
      return new Proxy(fs, {
        get(t, p, r) {
          const v = Reflect.get(t, p, r);
          // Without a batch: the changes go one by one, so a failure part-way is rolled back.
          if (p === 'applyChanges') return undefined;
          if (typeof v !== 'function') return v;
          if (p !== 'remove') return v.bind(t);
          // Just before b.txt is deleted, someone else rewrites it.
          return async (...args: unknown[]) => {
            if (!fired) {
              fired = true;
              await base!.writeText(await base!.resolve('/w/b.txt'), 'theirs\n');
            }
            return v.apply(t, args);
          };
        },
      });
    });
    for (const p of Object.keys(files)) await h.read(p);
    const r = await h.patch(patch);
    expect(r.isError && r.error.code).toBe('FS_STALE_VERSION');
    expect(r.text).toMatch(/while writing "\/w\/b\.txt" \(file 2 of 5\).*nothing was changed \(the 1 file already written was restored\)/);
    expect(await h.tree()).toEqual({ ...files, 'b.txt': 'theirs\n' });
  });

  it('says which files the rollback could not restore', async () => {
    // The 6th mutation (writing e.txt) fails, and so does the first undo (restoring d.txt).
    const calls = { n: 0 };
    const h = harness(files, (fs) =>
      new Proxy(fs, {
        get(t, p, r) {
          const v = Reflect.get(t, p, r);
          // Without a batch: the changes go one by one, so a failure part-way is rolled back.
          if (p === 'applyChanges') return undefined;
          if (typeof v !== 'function') return v;
          if (p !== 'writeBytes' && p !== 'remove' && p !== 'rename') return v.bind(t);
          return async (...args: unknown[]) => {
            calls.n++;
            if (calls.n === 6 || calls.n === 7) throw new FsError('FS_IO_ERROR', calls.n === 6 ? 'injected failure' : 'undo refused');
            return v.apply(t, args);
          };
        },
      }),
    );
    for (const p of Object.keys(files)) await h.read(p);
    const r = await h.patch(patch);
    expect(r.text).toMatch(/the rollback failed, so these files may hold the new content: "\/w\/d\.txt" \(.*undo refused\)/);
  });
});
