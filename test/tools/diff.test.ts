import fc from 'fast-check';
import { OMIT_HEADERS, applyPatch, formatPatch, structuredPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import { createFs, createHarness, type FsProvider, type FsTarget, type ToolResult } from '../../src/index.js';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import { createMemoryFs, type MemoryEntry } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { editOutputSchema, fsTools, writeOutputSchema, type EditValue, type WriteValue } from '../../src/tools/index.js';
import { MAX_DIFF_BYTES, capDiff, diffFields } from '../../src/tools/diff.js';

function harness(files: Record<string, MemoryEntry>) {
  const fs = createMemoryFs({ files, cwd: '/p' });
  const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools()] });
  const run = <V>(name: string, args: Record<string, unknown>) => ctx.tools.execute(name, args, { owner: 's' }) as Promise<ToolResult<V>>;
  const text = async (p: string) => (await fs.readText(await fs.resolve(p))).text;
  return { fs, run, text };
}

describe('write and edit diffs (structured value only)', () => {
  it('a new file diffs from /dev/null; the model text is unchanged', async () => {
    const h = harness({});
    const r = await h.run<WriteValue>('write', { file_path: 'n.txt', content: 'a\nb\n' });
    expect(r.text).toBe('Created "/p/n.txt" (4 bytes).');
    expect(r.value).toMatchObject({ diffTruncated: false, diff: '--- /dev/null\n+++ /p/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n' });
    expect(writeOutputSchema.safeParse(r.value).success).toBe(true);
  });

  it('an overwrite and an edit diff from the bytes read, keeping CRLF as stored', async () => {
    const h = harness({ '/p/a.txt': 'one\r\ntwo\r\n' });
    await h.run('read', { file_path: 'a.txt' });
    const e = await h.run<EditValue>('edit', { file_path: 'a.txt', old_string: 'two', new_string: 'TWO' });
    expect(e.text).toBe('Edited "/p/a.txt": 1 replacement; changed line 2.');
    expect(e.value!.diff).toBe('--- /p/a.txt\n+++ /p/a.txt\n@@ -1,2 +1,2 @@\n one\r\n-two\r\n+TWO\r\n');
    expect(editOutputSchema.safeParse(e.value).success).toBe(true);
    const w = await h.run<WriteValue>('write', { file_path: 'a.txt', content: 'one\nthree\n' });
    // Written as CRLF (the file's style), and the diff shows what was stored.
    expect(w.value!.diff).toBe('--- /p/a.txt\n+++ /p/a.txt\n@@ -1,2 +1,2 @@\n one\r\n-TWO\r\n+three\r\n');
  });

  it('caps a long diff at a line boundary and flags it', async () => {
    const h = harness({});
    const big = Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join('\n');
    const r = await h.run<WriteValue>('write', { file_path: 'big.txt', content: big });
    expect(r.value!.diffTruncated).toBe(true);
    expect(Buffer.byteLength(r.value!.diff!)).toBeLessThanOrEqual(MAX_DIFF_BYTES);
    expect(r.value!.diff!.endsWith('\n')).toBe(true);
    expect(capDiff('a\nbb\nccc\n', 6)).toEqual({ diff: 'a\nbb\n', diffTruncated: true });
  });

  it("property: applying a write's diff to the old text gives the stored text", async () => {
    const line = fc.constantFrom('a', 'b', 'c', '', 'x y');
    const lines = fc.array(line, { maxLength: 8 });
    await fc.assert(
      fc.asyncProperty(lines, lines, fc.boolean(), async (a, b, crlf) => {
        const eol = crlf ? '\r\n' : '\n';
        const before = a.map((l) => l + eol).join('');
        const h = harness({ '/p/f.txt': before });
        await h.run('read', { file_path: 'f.txt' });
        const w = await h.run<WriteValue>('write', { file_path: 'f.txt', content: b.map((l) => l + eol).join('') });
        expect(w.isError, w.text).toBe(false);
        const after = await h.text('/p/f.txt');
        const diff = w.value!.diff!;
        expect(diff === '' ? before : applyPatch(before, diff)).toBe(after);
      }),
      { numRuns: 100 },
    );
  });
});

describe('the diff of the changed lines alone', () => {
  /** The unified diff of the whole texts, as jsdiff gives it. */
  function fullDiff(a: string, b: string): string {
    const patch = structuredPatch('/f', '/f', a, b, undefined, undefined, { context: 3 });
    return patch.hunks.length === 0 ? '' : `--- /f\n+++ /f\n${formatPatch(patch, OMIT_HEADERS)}`;
  }
  const enc = (t: string) => new TextEncoder().encode(t);

  it('property: equals the diff of the whole texts (repeated lines, CRLF, no final line break)', () => {
    // Long lines that differ only at one end cross the 64-character blocks the common ends are found in.
    const line = fc.constantFrom('a', 'b', 'ab', 'c', '', 'x y', 'a\r', `${'x'.repeat(70)}a`, `${'x'.repeat(70)}b`, `a${'x'.repeat(64)}`, `b${'x'.repeat(64)}`);
    const text = fc.tuple(fc.array(line, { maxLength: 12 }), fc.constantFrom('\n', '\r\n'), fc.boolean()).map(([ls, eol, end]) => ls.join(eol) + (end && ls.length > 0 ? eol : ''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(diffFields('/f', enc(a), enc(b)).diff).toBe(fullDiff(a, b));
      }),
      { numRuns: 2000 },
    );
  });

  it('property: equals the diff of the whole texts for one replaced block in a longer file', () => {
    const body = fc.array(fc.constantFrom('a', 'b', 'c', '}', '', 'return x;', `${'x'.repeat(64)}a`, `${'x'.repeat(64)}b`, `a${'x'.repeat(64)}`, `b${'x'.repeat(64)}`), { minLength: 0, maxLength: 30 });
    fc.assert(
      fc.property(body, fc.nat(), fc.nat(3), body.map((l) => l.slice(0, 4)), (lines, at, removed, added) => {
        const i = lines.length === 0 ? 0 : at % lines.length;
        const after = [...lines.slice(0, i), ...added, ...lines.slice(i + removed)];
        const [a, b] = [lines.map((l) => `${l}\n`).join(''), after.map((l) => `${l}\n`).join('')];
        expect(diffFields('/f', enc(a), enc(b)).diff).toBe(fullDiff(a, b));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the diff costs no read of its own', () => {
  /** A memory filesystem whose provider counts the reads of file content (read, and modify's read). */
  function counted(files: Record<string, MemoryEntry>) {
    const inner = createMemoryProvider({ files, cwd: '/p' });
    const reads: string[] = [];
    const provider: FsProvider = Object.assign(Object.create(inner) as FsProvider, {
      read: (target: FsTarget, options: Parameters<FsProvider['read']>[1]) => {
        reads.push(`read ${target.targetKey}`);
        return inner.read(target, options);
      },
      ...(inner.modify && {
        modify: (target: FsTarget, ...rest: unknown[]) => {
          reads.push(`modify ${target.targetKey}`);
          return (inner.modify as (...a: unknown[]) => unknown)(target, ...rest);
        },
      }),
    });
    const fs = createFs(provider, { cwd: '/p' });
    const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools()] });
    const run = <V>(name: string, args: Record<string, unknown>) => ctx.tools.execute(name, args, { owner: 's' }) as Promise<ToolResult<V>>;
    return { run, reads };
  }

  it('edit and write read the file once, and still show the diff', async () => {
    const h = counted({ '/p/a.txt': 'one\ntwo\n' });
    await h.run('read', { file_path: 'a.txt' });
    h.reads.length = 0;
    const e = await h.run<EditValue>('edit', { file_path: 'a.txt', old_string: 'two', new_string: 'TWO' });
    expect(e.value!.diff).toBe('--- /p/a.txt\n+++ /p/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n');
    expect(h.reads).toHaveLength(1);
    h.reads.length = 0;
    const w = await h.run<WriteValue>('write', { file_path: 'a.txt', content: 'one\n' });
    expect(w.value!.diff).toBe('--- /p/a.txt\n+++ /p/a.txt\n@@ -1,2 +1,1 @@\n one\n-TWO\n');
    expect(h.reads).toHaveLength(1);
  });
});
