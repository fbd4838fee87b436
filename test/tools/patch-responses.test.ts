import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { applyPatchOperation, createPatchEditor, fsTools } from '../../src/tools/index.js';

function setup(files: Record<string, string>) {
  const fs = createMemoryFs({ cwd: '/w', files });
  const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools()] });
  const content = async (p: string) => {
    try {
      return (await fs.readText(await fs.resolve(p))).text;
    } catch {
      return undefined;
    }
  };
  return { ctx, content, read: (p: string, owner = 'o') => ctx.tools.execute('read', { file_path: p }, { owner }) };
}

describe('Responses API apply_patch_call operations', () => {
  it('create_file, update_file and delete_file go through the policy', async () => {
    const h = setup({ '/w/a.txt': 'one\ntwo\n' });
    const created = await applyPatchOperation(h.ctx, { type: 'create_file', path: 'n/new.txt', diff: '+hello\n+world\n' }, { owner: 'o' });
    expect(created).toEqual({ status: 'completed', output: 'Applied the patch to 1 file:\nA "/w/n/new.txt"' });
    expect(await h.content('/w/n/new.txt')).toBe('hello\nworld\n');

    const update = { type: 'update_file' as const, path: 'a.txt', diff: '@@\n one\n-two\n+TWO\n' };
    const unread = await applyPatchOperation(h.ctx, update, { owner: 'o' });
    expect(unread.status).toBe('failed');
    expect(unread.output).toMatch(/^Error: cannot edit "\/w\/a\.txt": it has not been read in this session .*nothing was changed — read the file first, then retry$/);
    await h.read('a.txt');
    expect((await applyPatchOperation(h.ctx, update, { owner: 'o' })).status).toBe('completed');
    expect(await h.content('/w/a.txt')).toBe('one\nTWO\n');

    expect(await applyPatchOperation(h.ctx, { type: 'delete_file', path: 'a.txt' }, { owner: 'o' })).toEqual({
      status: 'completed',
      output: 'Applied the patch to 1 file:\nD "/w/a.txt"',
    });
    expect(await h.content('/w/a.txt')).toBeUndefined();
  });

  it('reports malformed operations as failed, never throwing', async () => {
    const h = setup({});
    const bad = await applyPatchOperation(h.ctx, { type: 'create_file', path: 'x.txt', diff: 'no plus' }, { owner: 'o' });
    expect(bad).toEqual({ status: 'failed', output: 'Error: invalid patch: line 1: a line of a new file must start with "+", got "no plus"' });
    expect((await applyPatchOperation(h.ctx, { type: 'update_file', path: 'x.txt' }, { owner: 'o' })).output).toBe(
      'Error: invalid apply_patch operation: update_file needs a diff',
    );
    expect((await applyPatchOperation(h.ctx, { type: 'rename' as 'create_file', path: 'x.txt' }, { owner: 'o' })).status).toBe('failed');
    expect(await h.content('/w/x.txt')).toBeUndefined();
  });

  it('createPatchEditor gives the Agents SDK Editor shape, as one owner', async () => {
    const h = setup({ '/w/a.txt': 'a\n' });
    const editor = createPatchEditor(h.ctx, { owner: 'agent' });
    expect((await editor.createFile({ type: 'create_file', path: 'b.txt', diff: '+b' })).status).toBe('completed');
    // Its own create is an observation for that owner, not for another.
    expect((await editor.updateFile({ type: 'update_file', path: 'b.txt', diff: '-b\n+B' })).status).toBe('completed');
    expect(await h.content('/w/b.txt')).toBe('B\n');
    expect((await editor.deleteFile({ type: 'delete_file', path: 'a.txt' })).output).toMatch(/has not been read/);
    await h.read('a.txt', 'agent');
    expect((await editor.deleteFile({ type: 'delete_file', path: 'a.txt' })).status).toBe('completed');
  });

  it("updateFile honours the Agents SDK's moveTo, as one checked change", async () => {
    const h = setup({ '/w/a.txt': 'one\ntwo\n' });
    const editor = createPatchEditor(h.ctx, { owner: 'agent' });
    await h.read('a.txt', 'agent');
    const moved = await editor.updateFile({ type: 'update_file', path: 'a.txt', diff: '@@\n one\n-two\n+TWO\n', moveTo: 'd/b.txt' });
    expect(moved.status, moved.output).toBe('completed');
    expect(await h.content('/w/a.txt')).toBeUndefined();
    expect(await h.content('/w/d/b.txt')).toBe('one\nTWO\n');
    const wrong = await applyPatchOperation(h.ctx, { type: 'create_file', path: 'c.txt', diff: '+c', moveTo: 'e.txt' }, { owner: 'agent' });
    expect(wrong).toEqual({ status: 'failed', output: 'Error: invalid apply_patch operation: moveTo must be a non-empty string, on update_file only' });
    expect(await h.content('/w/c.txt')).toBeUndefined();
  });
});
