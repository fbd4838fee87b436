import { describe, expect, it } from 'vitest';
import { createHarness, type ToolResult } from '../../src/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, textEditorTool, type TextEditorValue } from '../../src/tools/index.js';

function setup(files: Record<string, string | Uint8Array>, options = {}) {
  const fs = createMemoryFs({ cwd: '/w', files });
  const policy = createObservationPolicy();
  const ctx = createHarness({ fs, plugins: [policy, fsTools(), textEditorTool(options)] });
  const ed = (args: object, owner = 'o') => ctx.tools.execute('str_replace_based_edit_tool', args, { owner }) as Promise<ToolResult<TextEditorValue>>;
  const content = async (p: string) => {
    try {
      return Buffer.from((await fs.readBytes(await fs.resolve(p), { maxBytes: 1 << 20 })).bytes).toString('utf8');
    } catch {
      return undefined;
    }
  };
  return { fs, policy, ed, content };
}

describe('str_replace_based_edit_tool', () => {
  it('view numbers the lines, honours view_range (-1 = end) and counts as a read', async () => {
    const h = setup({ '/w/a.txt': 'one\ntwo\nthree\n' });
    const all = await h.ed({ command: 'view', path: 'a.txt' });
    expect(all.text).toBe('1: one\n2: two\n3: three');
    expect(h.policy.observation('o', '/w/a.txt')).toEqual({ kind: 'present', version: all.value!.version });
    expect((await h.ed({ command: 'view', path: 'a.txt', view_range: [2, -1] })).text).toBe('2: two\n3: three');
    expect((await h.ed({ command: 'view', path: 'a.txt', view_range: [2, 2] })).text).toBe('2: two');
    const bad = await h.ed({ command: 'view', path: 'a.txt', view_range: [3, 9] });
    expect(bad.error?.code).toBe('FS_INVALID_ARGUMENT');
    expect(bad.text).toContain("not within the file's lines 1-3");
    expect((await h.ed({ command: 'view', path: 'nope.txt' })).error?.code).toBe('FS_NOT_FOUND');
  });

  it('view of a directory lists two levels, hidden items excluded', async () => {
    const h = setup({ '/w/d/a.txt': 'a', '/w/d/sub/b.txt': 'b', '/w/d/sub/deep/c.txt': 'c', '/w/d/.git/x': 'x' });
    expect((await h.ed({ command: 'view', path: 'd' })).text).toBe(
      'Files and directories up to 2 levels deep in "/w/d", hidden items excluded:\na.txt\nsub/\nsub/b.txt\nsub/deep/',
    );
  });

  it('create makes a new file, and overwrites only a file the owner viewed', async () => {
    const h = setup({ '/w/e.txt': 'exists\r\n' });
    expect((await h.ed({ command: 'create', path: 'n/new.txt', file_text: 'hi\n' })).text).toBe('Created "/w/n/new.txt".');
    expect(await h.content('/w/n/new.txt')).toBe('hi\n');
    const refused = await h.ed({ command: 'create', path: 'e.txt', file_text: 'x\n' });
    expect(refused.error?.code).toBe('FS_NOT_OBSERVED');
    expect(await h.content('/w/e.txt')).toBe('exists\r\n');
    await h.ed({ command: 'view', path: 'e.txt' });
    expect((await h.ed({ command: 'create', path: 'e.txt', file_text: 'x\ny\n' })).text).toBe('Overwrote "/w/e.txt".');
    expect(await h.content('/w/e.txt')).toBe('x\r\ny\r\n'); // the file's CRLF kept, as write does
  });

  it('str_replace needs exactly one match and says how many and where otherwise', async () => {
    const h = setup({ '/w/a.txt': 'x = 1\ny = 2\nx = 1\n' });
    expect((await h.ed({ command: 'str_replace', path: 'a.txt', old_str: 'y = 2', new_str: 'y = 3' })).error?.code).toBe('FS_NOT_OBSERVED');
    await h.ed({ command: 'view', path: 'a.txt' });
    const twice = await h.ed({ command: 'str_replace', path: 'a.txt', old_str: 'x = 1', new_str: 'x = 0' });
    expect(twice.error?.code).toBe('FS_AMBIGUOUS_EDIT');
    expect(twice.text).toBe(
      'Error: No replacement was made in "/w/a.txt": old_str matches 2 times (at lines 1, 3); include more surrounding lines to make it unique',
    );
    expect((await h.ed({ command: 'str_replace', path: 'a.txt', old_str: 'zzz', new_str: 'q' })).error?.code).toBe('FS_EDIT_NOT_FOUND');
    const ok = await h.ed({ command: 'str_replace', path: 'a.txt', old_str: 'y = 2', new_str: 'y = 3' });
    expect(ok.text).toBe('Edited "/w/a.txt". The lines around the change:\n1: x = 1\n2: y = 3\n3: x = 1');
    expect(await h.content('/w/a.txt')).toBe('x = 1\ny = 3\nx = 1\n');
  });

  it('insert puts text after insert_line (0 = first), keeps CRLF and a missing final break; takes insert_text or new_str', async () => {
    const h = setup({ '/w/c.txt': 'a\r\nb', '/w/l.txt': 'a\nb\n' });
    await h.ed({ command: 'view', path: 'c.txt' });
    await h.ed({ command: 'view', path: 'l.txt' });
    expect((await h.ed({ command: 'insert', path: 'c.txt', insert_line: 0, insert_text: 'top' })).isError).toBe(false);
    expect(await h.content('/w/c.txt')).toBe('top\r\na\r\nb');
    await h.ed({ command: 'insert', path: 'c.txt', insert_line: 3, new_str: 'end1\nend2' });
    expect(await h.content('/w/c.txt')).toBe('top\r\na\r\nb\r\nend1\r\nend2');
    await h.ed({ command: 'insert', path: 'l.txt', insert_line: 1, insert_text: 'mid\n' });
    expect(await h.content('/w/l.txt')).toBe('a\nmid\nb\n');
    const past = await h.ed({ command: 'insert', path: 'l.txt', insert_line: 9, insert_text: 'x' });
    expect(past.text).toContain('insert_line 9 is past the end of "/w/l.txt", which has 3 lines');
    expect((await h.ed({ command: 'insert', path: 'l.txt', insert_line: 1 })).text).toBe('Error: insert needs insert_text');
  });

  it('undo_edit reverts this owner\'s changes newest first, unless the file changed since', async () => {
    const h = setup({ '/w/a.txt': 'one\n' });
    await h.ed({ command: 'view', path: 'a.txt' });
    await h.ed({ command: 'str_replace', path: 'a.txt', old_str: 'one', new_str: 'two' });
    await h.ed({ command: 'insert', path: 'a.txt', insert_line: 1, insert_text: 'three' });
    expect((await h.ed({ command: 'undo_edit', path: 'a.txt' }, 'other')).error?.code).toBe('FS_INVALID_ARGUMENT');
    expect((await h.ed({ command: 'undo_edit', path: 'a.txt' })).text).toBe('Undid the last edit of "/w/a.txt".');
    expect(await h.content('/w/a.txt')).toBe('two\n');
    await h.ed({ command: 'undo_edit', path: 'a.txt' });
    expect(await h.content('/w/a.txt')).toBe('one\n');
    expect((await h.ed({ command: 'undo_edit', path: 'a.txt' })).text).toBe('Error: no edit of "/w/a.txt" by this session to undo');

    await h.ed({ command: 'create', path: 'n.txt', file_text: 'new' });
    await h.ed({ command: 'str_replace', path: 'a.txt', old_str: 'one', new_str: 'uno' });
    await h.fs.writeText(await h.fs.resolve('/w/a.txt'), 'someone else\n');
    const stale = await h.ed({ command: 'undo_edit', path: 'a.txt' });
    expect(stale.error?.code).toBe('FS_STALE_VERSION');
    expect(await h.content('/w/a.txt')).toBe('someone else\n');
    expect((await h.ed({ command: 'undo_edit', path: 'n.txt' })).text).toBe('Undid the creation of "/w/n.txt": the file is removed.');
    expect(await h.content('/w/n.txt')).toBeUndefined();
  });

  it('clips a long view at maxCharacters', async () => {
    const h = setup({ '/w/big.txt': 'x'.repeat(500) }, { maxCharacters: 100 });
    const r = await h.ed({ command: 'view', path: 'big.txt' });
    expect(r.text).toMatch(/^1: x{97}\n<response clipped: view a narrower view_range to see the rest>$/);
  });
});
