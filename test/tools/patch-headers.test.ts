import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, patchTools, type PatchValue } from '../../src/tools/index.js';

async function setup(files: Record<string, string>) {
  const fs = createMemoryFs({ files, cwd: '/w' });
  const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools(), patchTools()] });
  for (const path of Object.keys(files)) await ctx.tools.execute('read', { file_path: path }, { owner: 's' });
  const patch = (input: string) => ctx.tools.execute('apply_patch', { input }, { owner: 's' });
  const text = async (path: string) => (await fs.readText(await fs.resolve(path))).text;
  return { ctx, patch, text };
}

const update = (path: string, ...lines: string[]) => ['*** Begin Patch', `*** Update File: ${path}`, ...lines, '*** End Patch'].join('\n');

describe('apply_patch: an "@@" line repeated as the first context line', () => {
  it('an indented header that equals its first context line loosens nothing', async () => {
    const { patch, text } = await setup({ '/w/a.py': 'class A:\n    def f(self):\n        x = 1\n' });
    const r = await patch(update('a.py', '@@     def f(self):', '     def f(self):', '-        x = 1', '+        x = 2'));
    expect(r.isError).toBe(false);
    expect(r.text).not.toMatch(/ignoring/);
    expect(!r.isError && (r.value as PatchValue).files[0]!.loosened).toEqual([]);
    expect(await text('a.py')).toBe('class A:\n    def f(self):\n        x = 2\n');
  });

  it('matches exactly at the header rather than loosely further down', async () => {
    const file = 'def f():\n    x = 1\n\nclass B:\n    def f():\n        x = 1\n';
    const { patch, text } = await setup({ '/w/b.py': file });
    const r = await patch(update('b.py', '@@ def f():', ' def f():', '-    x = 1', '+    x = 2'));
    expect(r.text).not.toMatch(/ignoring/);
    expect(await text('b.py')).toBe(file.replace('    x = 1\n', '    x = 2\n'));
  });
});

describe('apply_patch errors show paths as the other tools do', () => {
  it('a hunk that is not found names the file by its absolute path, as edit does', async () => {
    const { ctx, patch } = await setup({ '/w/sub/c.txt': 'one\n' });
    const r = await patch(update('sub/c.txt', '@@', '-absent', '+x'));
    expect(r.isError && r.text).toMatch(/^Error: cannot update "\/w\/sub\/c\.txt": hunk 1 /);
    const edit = await ctx.tools.execute('edit', { file_path: 'sub/c.txt', old_string: 'absent', new_string: 'x' }, { owner: 's' });
    expect(edit.text).toContain('"/w/sub/c.txt"');
  });
});
