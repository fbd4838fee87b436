import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createHarness, FsVersion, type ToolResult } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import {
  fsTools,
  renderEdit,
  renderRead,
  renderWrite,
  type FsToolsOptions,
  type ReadValue,
} from '../../src/tools/index.js';
import { readWindow } from '../../src/tools/read.js';

function setup(files: Record<string, string | Uint8Array>, options: FsToolsOptions = {}) {
  const fs = createMemoryFs({ cwd: '/w', files });
  const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools(options)] });
  const read = (file_path: string, extra: { offset?: number; limit?: number } = {}) =>
    ctx.tools.execute('read', { file_path, ...extra }, { owner: 'o' }) as Promise<ToolResult<ReadValue>>;
  return { ctx, read };
}

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');
/** The numbered-lines block of a read rendering (between `<content>\n` and the blank line). */
function linesBlock(rendered: string): string {
  const body = rendered.slice(rendered.indexOf('<content>\n') + 10, rendered.lastIndexOf('\n\n('));
  return body;
}
const footer = (rendered: string) => /\n(\([^\n]*\))\n<\/content>$/.exec(rendered)?.[1];

describe('read rendering', () => {
  it('renders the envelope, N: lines, a blank line and the end-of-file footer', async () => {
    const { read } = setup({ 'a.txt': 'one\ntwo\n\tthree\n' });
    const r = await read('a.txt');
    expect(r.text).toBe(
      '<path>/w/a.txt</path>\n<type>file</type>\n<content>\n1: one\n2: two\n3: \tthree\n\n(End of file - total 3 lines)\n</content>',
    );
    expect(r.value).toMatchObject({ path: '/w/a.txt', offset: 1, totalLines: 3, bom: false });
    expect(r.value!.cappedAtBytes).toBeUndefined();
  });

  it('says which offset continues a window that stops before the end', async () => {
    const { read } = setup({ 'a.txt': 'a\nb\nc\nd\n' });
    const r = await read('a.txt', { offset: 2, limit: 2 });
    expect(r.text).toBe('<path>/w/a.txt</path>\n<type>file</type>\n<content>\n2: b\n3: c\n\n(Showing lines 2-3 of 4. Use offset=4 to continue.)\n</content>');
    const last = await read('a.txt', { offset: 4, limit: 2 });
    expect(footer(last.text)).toBe('(End of file - total 4 lines)');
    const one = await read('a.txt', { offset: 4, limit: 1 });
    expect(footer(one.text)).toBe('(End of file - total 4 lines)');
  });

  it('renders an empty file with its footer alone', async () => {
    const { read } = setup({ 'empty.txt': '' });
    const r = await read('empty.txt');
    expect(r.text).toBe('<path>/w/empty.txt</path>\n<type>file</type>\n<content>\n(End of file - the file is empty)\n</content>');
    expect(r.value).toMatchObject({ lines: [], totalLines: 0 });
    const past = await read('empty.txt', { offset: 2 });
    expect(past.error?.code).toBe('FS_INVALID_ARGUMENT');
    expect(past.text).toBe('Error: offset 2 is past the end of "/w/empty.txt", which has 0 lines');
  });

  it('refuses an offset past the end, naming the line count', async () => {
    const { read, ctx } = setup({ 'a.txt': 'a\nb\nc\n' });
    const r = await read('a.txt', { offset: 4 });
    expect(r).toMatchObject({ isError: true, error: { name: 'FsError', code: 'FS_INVALID_ARGUMENT' } });
    expect(r.text).toBe('Error: offset 4 is past the end of "/w/a.txt", which has 3 lines; use an offset from 1 to 3');
    // Nothing was shown, so nothing was observed.
    const e = await ctx.tools.execute('edit', { file_path: 'a.txt', old_string: 'a', new_string: 'z' }, { owner: 'o' });
    expect(e.error?.code).toBe('FS_NOT_OBSERVED');
  });

  it('counts lines: a final line break does not start another line', async () => {
    const { read } = setup({ 'a': 'x\n', 'b': 'x', 'c': '\n', 'd': 'x\n\n', 'e': 'x\r\ny' });
    const totals = await Promise.all(['a', 'b', 'c', 'd', 'e'].map(async (f) => (await read(f)).value!.totalLines));
    expect(totals).toEqual([1, 1, 1, 2, 2]);
    expect(linesBlock((await read('c')).text)).toBe('1: ');
  });

  it('shows CRLF files without the CR, keeps a lone CR visible as ␍, never shows the BOM', async () => {
    const { read } = setup({
      'crlf.txt': 'one\r\ntwo\r\n',
      'bom.txt': '\uFEFFalpha\nbeta\n',
      'lone.txt': 'a\rb\r\nc\r',
      'bomcrlf.txt': '\uFEFFx\r\ny',
    });
    const crlf = await read('crlf.txt');
    expect(linesBlock(crlf.text)).toBe('1: one\n2: two');
    expect(crlf.text).not.toContain('\r');
    expect(crlf.value!.lines.map((l) => l.text)).toEqual(['one', 'two']);

    const bom = await read('bom.txt');
    expect(bom.text).not.toContain('\uFEFF');
    expect(linesBlock(bom.text)).toBe('1: alpha\n2: beta');
    expect(bom.value!.bom).toBe(true);

    const lone = await read('lone.txt');
    expect(linesBlock(lone.text)).toBe('1: a␍b\n2: c␍');
    expect(lone.value!.lines.map((l) => l.text)).toEqual(['a\rb', 'c\r']);

    expect(linesBlock((await read('bomcrlf.txt')).text)).toBe('1: x\n2: y');
  });

  it('truncates long lines at the character limit and marks them', async () => {
    const { read } = setup({ 'long.txt': `${'a'.repeat(5000)}\nshort\n` });
    const r = await read('long.txt');
    const [first, second] = linesBlock(r.text).split('\n');
    expect(first).toBe(`1: ${'a'.repeat(2000)} … (line truncated: 2000 of 5000 characters shown)`);
    expect(second).toBe('2: short');
    expect(r.value!.lines[0]).toEqual({ number: 1, text: 'a'.repeat(2000), fullLength: 5000 });
    expect(footer(r.text)).toBe('(End of file - total 2 lines)');
  });

  it('counts characters as code points and never splits a surrogate pair', async () => {
    const { read } = setup({ 'emoji.txt': `${'😀'.repeat(2500)}\n`, 'exact.txt': `${'😀'.repeat(2000)}\r\n` });
    const r = await read('emoji.txt');
    const line = r.value!.lines[0]!;
    expect(line.text).toBe('😀'.repeat(2000));
    expect(line.fullLength).toBe(2500);
    expect(r.text.isWellFormed()).toBe(true);
    expect(r.text).toContain('(line truncated: 2000 of 2500 characters shown)');
    // Exactly at the limit (the CR of CRLF does not count): not truncated.
    expect((await read('exact.txt')).value!.lines[0]).toEqual({ number: 1, text: '😀'.repeat(2000) });
  });

  it('caps the bytes of a call, counting the N: prefixes, and says where to continue', async () => {
    // Each line renders as "N: " + 100 chars + LF: 104 bytes for N < 10, 105 from 10. Nine fit in 1 KiB.
    const content = Array.from({ length: 50 }, () => 'x'.repeat(100)).join('\n') + '\n';
    const { read } = setup({ 'a.txt': content }, { maxBytes: 1024 });
    const r = await read('a.txt');
    expect(r.value!.lines.map((l) => l.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(r.value!.cappedAtBytes).toBe(1024);
    expect(footer(r.text)).toBe('(Output capped at 1 KiB. Showing lines 1-9 of 50. Use offset=10 to continue.)');
    expect(utf8(`${linesBlock(r.text)}\n`)).toBeLessThanOrEqual(1024);
  });

  it('applies the default 50 KiB cap to what the model sees', async () => {
    const content = Array.from({ length: 1900 }, (_, i) => `${i}`.padEnd(40, '.')).join('\n');
    const { read } = setup({ 'a.txt': content });
    const r = await read('a.txt');
    const block = `${linesBlock(r.text)}\n`;
    expect(utf8(block)).toBeLessThanOrEqual(50 * 1024);
    const shown = r.value!.lines.length;
    expect(shown).toBeLessThan(1900);
    // One more line would not have fitted.
    expect(utf8(block) + utf8(`${shown + 1}: ${`${shown}`.padEnd(40, '.')}\n`)).toBeGreaterThan(50 * 1024);
    expect(footer(r.text)).toBe(`(Output capped at 50 KiB. Showing lines 1-${shown} of 1900. Use offset=${shown + 1} to continue.)`);
  });

  it('always returns at least one line, cut to fit, instead of an empty window', async () => {
    const lines = ['a', 'b', 'c', 'd', 'é'.repeat(3000), 'f'];
    const { read } = setup({ 'a.txt': lines.join('\n') }, { maxBytes: 1024, maxLineChars: 5000 });
    const r = await read('a.txt', { offset: 5 });
    expect(r.value!.lines).toHaveLength(1);
    const line = r.value!.lines[0]!;
    expect(line.number).toBe(5);
    expect(line.fullLength).toBe(3000);
    expect(line.text.length).toBeGreaterThan(400);
    expect(utf8(`${linesBlock(r.text)}\n`)).toBeLessThanOrEqual(1024);
    expect(footer(r.text)).toBe('(Output capped at 1 KiB. Showing lines 5-5 of 6. Use offset=6 to continue.)');
    const next = await read('a.txt', { offset: 6 });
    expect(linesBlock(next.text)).toBe('6: f');
  });

  it('returns at most maxLines lines, whatever limit asks for', async () => {
    const { read } = setup({ 'a.txt': 'a\nb\nc\nd\ne\nf\ng\n' }, { maxLines: 5 });
    const r = await read('a.txt', { limit: 100 });
    expect(r.value!.lines).toHaveLength(5);
    expect(footer(r.text)).toBe('(Showing lines 1-5 of 7. Use offset=6 to continue.)');
  });
});

describe('readWindow', () => {
  /** The reference: split at LF, drop the CR of CRLF, no line after a final LF. */
  const reference = (text: string) => {
    if (text === '') return [];
    const lines = text.split('\n').map((l, i, all) => (i < all.length - 1 && l.endsWith('\r') ? l.slice(0, -1) : l));
    if (text.endsWith('\n')) lines.pop();
    return lines;
  };
  const chunked = (text: string, cuts: number[]) => {
    const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
    const parts: string[] = [];
    let at = 0;
    for (const p of points) {
      parts.push(text.slice(at, p));
      at = p;
    }
    parts.push(text.slice(at));
    return (async function* () {
      yield* parts;
    })();
  };
  const textArb = fc.array(fc.constantFrom('a', 'é', '😀', '\n', '\r', '\r\n', ' '), { maxLength: 40 }).map((a) => a.join(''));

  it('returns the reference lines for any window and any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        textArb,
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        async (text, cuts, offset, limit) => {
          const ref = reference(text);
          const w = await readWindow(chunked(text, cuts), { offset, limit, maxLineChars: 1000, maxBytes: 100_000 });
          expect(w.totalLines).toBe(ref.length);
          expect(w.lines).toEqual(ref.slice(offset - 1, offset - 1 + limit).map((t, i) => ({ number: offset + i, text: t })));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('cuts long lines to the same prefix of code points whatever the chunking', async () => {
    await fc.assert(
      fc.asyncProperty(textArb, fc.array(fc.nat(), { maxLength: 6 }), fc.integer({ min: 1, max: 6 }), async (text, cuts, max) => {
        const ref = reference(text);
        const w = await readWindow(chunked(text, cuts), { offset: 1, limit: 100, maxLineChars: max, maxBytes: 100_000 });
        expect(w.lines.map((l) => l.text)).toEqual(ref.map((l) => [...l].slice(0, max).join('')));
        expect(w.lines.map((l) => l.fullLength)).toEqual(ref.map((l) => ([...l].length > max ? [...l].length : undefined)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('write and edit rendering', () => {
  const version = FsVersion('v');
  it('renders write results', () => {
    expect(renderWrite({ path: '/w/a', operation: 'create', version, bytes: 1 })).toBe('Created "/w/a" (1 byte).');
    expect(renderWrite({ path: '/w/a', operation: 'update', version, bytes: 12 })).toBe('Updated "/w/a" (12 bytes).');
  });

  it('renders edit results with the count and the changed lines', () => {
    const edit = (lines: { start: number; end: number }[]) =>
      renderEdit({ path: '/w/a', version, replacements: lines.length, replaceAll: lines.length > 1, lines });
    expect(edit([{ start: 7, end: 7 }])).toBe('Edited "/w/a": 1 replacement; changed line 7.');
    expect(edit([{ start: 7, end: 9 }])).toBe('Edited "/w/a": 1 replacement; changed lines 7-9.');
    expect(edit([{ start: 1, end: 1 }, { start: 4, end: 5 }])).toBe('Edited "/w/a": 2 replacements; changed lines 1, 4-5.');
    // Replacements sharing a line are listed once.
    expect(edit([{ start: 1, end: 1 }, { start: 1, end: 1 }, { start: 1, end: 1 }])).toBe('Edited "/w/a": 3 replacements; changed line 1.');
    expect(edit([{ start: 2, end: 3 }, { start: 3, end: 3 }, { start: 3, end: 4 }, { start: 6, end: 6 }])).toBe(
      'Edited "/w/a": 4 replacements; changed lines 2-4, 6.',
    );
    const many = Array.from({ length: 25 }, (_, i) => ({ start: i + 1, end: i + 1 }));
    expect(edit(many)).toMatch(/changed lines 1, 2, .*, 20, … \(5 more\)\.$/);
  });

  it('reports the changed lines of a real edit', async () => {
    const { ctx, read } = setup({ 'a.txt': 'a\nb\nc\nb\n' });
    await read('a.txt');
    const r = await ctx.tools.execute('edit', { file_path: 'a.txt', old_string: 'b', new_string: 'B1\nB2', replace_all: true }, { owner: 'o' });
    expect(r.text).toBe('Edited "/w/a.txt": 2 replacements; changed lines 2-3, 5-6.');
    expect(r.value).toMatchObject({ lines: [{ start: 2, end: 3 }, { start: 5, end: 6 }] });
  });

  it('renders a read value without the tool', () => {
    const value: ReadValue = { path: '/p', version, bom: false, offset: 3, lines: [{ number: 3, text: 'x' }], totalLines: 3 };
    expect(renderRead(value)).toBe('<path>/p</path>\n<type>file</type>\n<content>\n3: x\n\n(End of file - total 3 lines)\n</content>');
  });
});
