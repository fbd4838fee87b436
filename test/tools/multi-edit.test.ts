import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHarness, type ToolResult } from '../../src/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { applyEdit } from '../../src/seam/index.js';
import { editOutputSchema, fsTools, type EditValue } from '../../src/tools/index.js';

function setup(files: Record<string, string | Uint8Array>) {
  const fs = createMemoryFs({ cwd: '/w', files });
  const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools()] });
  const run = (name: string, args: object) => ctx.tools.execute(name, args, { owner: 'o' }) as Promise<ToolResult<EditValue>>;
  const bytes = async (p: string) => Buffer.from((await fs.readBytes(await fs.resolve(p), { maxBytes: 1 << 20 })).bytes);
  return { fs, run, bytes };
}

describe('edit with edits: [...]', () => {
  it('applies the edits in order to one buffer and writes once', async () => {
    const h = setup({ '/w/a.txt': 'one\ntwo\nthree\n' });
    await h.run('read', { file_path: 'a.txt' });
    const r = await h.run('edit', {
      file_path: 'a.txt',
      edits: [
        { old_string: 'one', new_string: 'uno' },
        { old_string: 'uno\ntwo', new_string: 'uno\ndos' }, // sees the first edit's result
        { old_string: 'e', new_string: 'E', replace_all: true },
      ],
    });
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toBe('Edited "/w/a.txt" (3 edits): 4 replacements; changed lines 1-3.');
    expect(editOutputSchema.safeParse(r.value).success).toBe(true);
    expect(r.value!.diff).toContain('-one\n-two\n-three\n+uno\n+dos\n+thrEE\n');
    expect((await h.bytes('/w/a.txt')).toString()).toBe('uno\ndos\nthrEE\n');
  });

  it('is all or nothing: a failing edit names its index and nothing is written', async () => {
    const h = setup({ '/w/a.txt': 'x\nx\ny\n' });
    await h.run('read', { file_path: 'a.txt' });
    const missing = await h.run('edit', { file_path: 'a.txt', edits: [{ old_string: 'y', new_string: 'Y' }, { old_string: 'zzz', new_string: 'q' }] });
    expect(missing.error?.code).toBe('FS_EDIT_NOT_FOUND');
    expect(missing.text).toMatch(/^Error: cannot edit "\/w\/a\.txt": edits\[1\]: old_string was not found.*; no edit was applied$/);
    const twice = await h.run('edit', { file_path: 'a.txt', edits: [{ old_string: 'y', new_string: 'Y' }, { old_string: 'x', new_string: 'q' }] });
    expect(twice.error?.code).toBe('FS_AMBIGUOUS_EDIT');
    expect(twice.text).toContain('edits[1]: old_string matches 2 times (at lines 1, 2)');
    expect((await h.bytes('/w/a.txt')).toString()).toBe('x\nx\ny\n');
  });

  it('needs a read and a fresh version, like a single edit', async () => {
    const h = setup({ '/w/a.txt': 'a\n' });
    const args = { file_path: 'a.txt', edits: [{ old_string: 'a', new_string: 'b' }] };
    expect((await h.run('edit', args)).error?.code).toBe('FS_NOT_OBSERVED');
    await h.run('read', { file_path: 'a.txt' });
    await h.fs.writeText(await h.fs.resolve('/w/a.txt'), 'a\nmore\n');
    expect((await h.run('edit', args)).error?.code).toBe('FS_STALE_VERSION');
  });

  it('refuses a pair and a list together, and a pair with a missing half', async () => {
    const h = setup({ '/w/a.txt': 'a\n' });
    const both = await h.run('edit', { file_path: 'a.txt', old_string: 'a', new_string: 'b', edits: [{ old_string: 'a', new_string: 'b' }] });
    expect(both.text).toBe('Error: invalid arguments for edit: argument "edits": give either old_string and new_string, or edits, not both');
    const half = await h.run('edit', { file_path: 'a.txt', old_string: 'a' });
    expect(half.text).toBe('Error: invalid arguments for edit: missing required argument "new_string" (or give edits)');
    expect((await h.run('edit', { file_path: 'a.txt', edits: [] })).error?.code).toBe('FS_INVALID_ARGUMENT');
  });

  it('keeps the BOM and CRLF', async () => {
    const h = setup({ '/w/b.txt': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a\r\nb\r\n')]) });
    await h.run('read', { file_path: 'b.txt' });
    await h.run('edit', { file_path: 'b.txt', edits: [{ old_string: 'a', new_string: 'A\nA2' }, { old_string: 'b', new_string: 'B' }] });
    expect(await h.bytes('/w/b.txt')).toEqual(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('A\r\nA2\r\nB\r\n')]));
  });

  it('ends where applying the seam edit engine one edit at a time ends (property)', async () => {
    const word = fc.constantFrom('a', 'b', 'ab', 'c\n', 'x');
    await fc.assert(
      fc.asyncProperty(fc.array(word, { minLength: 1, maxLength: 12 }), fc.array(fc.tuple(word, word, fc.boolean()), { minLength: 1, maxLength: 4 }), async (parts, edits) => {
        const start = parts.join('');
        const h = setup({ '/w/f.txt': start });
        await h.run('read', { file_path: 'f.txt' });
        let expected: string | undefined = start;
        for (const [o, n, all] of edits) {
          const r = applyEdit(expected, o, n, all);
          if (!r.ok) {
            expected = undefined;
            break;
          }
          expected = r.text;
        }
        const r = await h.run('edit', { file_path: 'f.txt', edits: edits.map(([o, n, all]) => ({ old_string: o, new_string: n, replace_all: all })) });
        expect(r.isError).toBe(expected === undefined);
        expect((await h.bytes('/w/f.txt')).toString()).toBe(expected ?? start);
      }),
      { numRuns: 60 },
    );
  });
});
