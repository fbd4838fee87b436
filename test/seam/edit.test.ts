import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyEdit, crlfToLf, nearMatchHint } from '../../src/seam/index.js';

const unit = fc.constantFrom('a', 'b', 'x', ' ', '\t', '\n', '\r\n', '\r', '$&', '$$', '$1', "$'", '$`', 'é', '😀', '"', '“');
const text = (max = 40) => fc.array(unit, { maxLength: max }).map((u) => u.join(''));
const lfText = (max = 40) => text(max).map((t) => t.replaceAll('\r', ''));

function ok(result: ReturnType<typeof applyEdit>) {
  if (!result.ok) throw result.error;
  return result;
}

describe('applyEdit', () => {
  it('E4: on LF-only text with replace_all, equals literal split/join ($ patterns are not expanded)', () => {
    fc.assert(
      fc.property(lfText(), lfText(4).filter((s) => s.length > 0), lfText(6), (t, old, rep) => {
        fc.pre(old !== rep && t.includes(old));
        const r = ok(applyEdit(t, old, rep, true));
        expect(r.text).toBe(t.split(old).join(rep));
        expect(r.replacements).toBe(t.split(old).length - 1);
      }),
    );
  });

  it('named regression: replace_all of a million matches on one long line is linear (it took minutes)', () => {
    // Each match used to look for its region's line break from its own start: quadratic with no break.
    const n = 1_000_000;
    const r = ok(applyEdit('x'.repeat(n), 'x', '\u{81615}y', true));
    expect(r.replacements).toBe(n);
    expect(r.text).toBe('\u{81615}y'.repeat(n));
    const crlf = ok(applyEdit(`${'x'.repeat(n)}\r\nend`, 'x', 'a\nb', true));
    expect(crlf.text.startsWith('a\r\nba\r\nb')).toBe(true);
    expect(crlf.lines.at(-1)).toEqual({ start: n, end: n + 1 });
  });

  it('E4: named regression — "$&" and "$$" are written as-is', () => {
    expect(ok(applyEdit('cost A', 'A', '$$5 $& $1')).text).toBe('cost $$5 $& $1');
  });

  it('E3: counts non-overlapping matches left to right', () => {
    expect(ok(applyEdit('aaa', 'aa', 'b')).text).toBe('ba');
    const r = applyEdit('x\nfoo\ny\nfoo\nfoo', 'foo', 'bar');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('FS_AMBIGUOUS_EDIT');
      expect(r.error.message).toContain('3 times');
      expect(r.error.message).toContain('lines 2, 4, 5');
    }
    const missing = applyEdit('abc', 'zzz', 'y');
    expect(missing.ok || missing.error.code).toBe('FS_EDIT_NOT_FOUND');
  });

  it('E1/E2: empty old_string and identical strings are rejected', () => {
    const empty = applyEdit('abc', '', 'x');
    expect(empty.ok || empty.error.code).toBe('FS_INVALID_ARGUMENT');
    const same = applyEdit('a\r\nb', 'a\r\nb', 'a\nb');
    expect(same.ok || same.error.code).toBe('FS_INVALID_ARGUMENT');
  });

  it('E5: every character outside the matched span is unchanged (BOM-free text, any line endings)', () => {
    fc.assert(
      fc.property(text(), text(), text(6), text(6), (before, after, middle, rep) => {
        // '§' and '¤' never occur in the generated text, so the match is unique.
        // A lone CR just before a line break cannot survive a region whose breaks are LF: it reads as CRLF.
        fc.pre(!/\r\r?\n/.test(rep.replaceAll('\r\n', '\n')));
        const old = `§${middle}¤`;
        const t = before + old + after;
        const r = ok(applyEdit(t, old, rep, false));
        expect(r.text.startsWith(before)).toBe(true);
        expect(r.text.endsWith(after)).toBe(true);
        const inserted = r.text.slice(before.length, r.text.length - after.length);
        expect(crlfToLf(inserted)).toBe(crlfToLf(rep));
      }),
    );
  });

  it('L1: LF in old_string matches CRLF text and CRLF in old_string matches LF text', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z ]{1,6}$/), { minLength: 3, maxLength: 8 }), fc.nat(), (lines, k) => {
        const i = k % (lines.length - 1);
        const crlf = lines.join('\r\n') + '\r\n';
        const lf = lines.join('\n') + '\n';
        const oldLf = `${lines[i]}\n${lines[i + 1]}`;
        const oldCrlf = `${lines[i]}\r\n${lines[i + 1]}`;
        const a = ok(applyEdit(crlf, oldLf, 'X', true));
        const b = ok(applyEdit(lf, oldCrlf, 'X', true));
        expect(a.text).toBe(crlf.split(oldCrlf).join('X'));
        expect(b.text).toBe(lf.split(oldLf).join('X'));
      }),
    );
  });

  it('L2: line breaks in new_string take the ending of the matched region; other lines keep theirs', () => {
    const mixed = 'one\r\ntwo\r\nthree\nfour\nfive\r\n';
    expect(ok(applyEdit(mixed, 'two', '2a\n2b')).text).toBe('one\r\n2a\r\n2b\r\nthree\nfour\nfive\r\n');
    expect(ok(applyEdit(mixed, 'four', '4a\r\n4b')).text).toBe('one\r\ntwo\r\nthree\n4a\n4b\nfive\r\n');
    expect(ok(applyEdit(mixed, 'three\nfour', 'x\ny')).text).toBe('one\r\ntwo\r\nx\ny\nfive\r\n');
    let applied = 0;
    let runs = 0;
    fc.assert(
      // The text is built around old_string, so (nearly) every case reaches the assertion.
      fc.property(text(), text(), text(5).filter((s) => s.length > 0), text(8), (before, after, old, rep) => {
        fc.pre(crlfToLf(old) !== crlfToLf(rep));
        runs++;
        const t = `${before}${old}${after}`;
        const r = applyEdit(t, old, rep, true);
        if (!r.ok) return;
        applied++;
        // Every inserted line break has the same style (one per match region), and the result
        // outside the replacement text keeps t's line breaks: counting them proves both.
        const breaks = (s: string) => (s.match(/\r\n|\n/g) ?? []).length;
        const removed = breaks(crlfToLf(t)) - breaks(crlfToLf(r.text));
        expect(removed).toBe(r.replacements * (breaks(crlfToLf(old)) - breaks(crlfToLf(rep))));
      }),
    );
    // A lone CR beside the splice can merge into a CRLF and hide the match; that must stay rare.
    expect(applied).toBeGreaterThan(runs * 0.8);
  });

  it('L3: a lone CR is an ordinary character, not a line break', () => {
    const r = ok(applyEdit('a\rb\nc', 'c', 'C'));
    expect(r.text).toBe('a\rb\nC');
    expect(r.lines).toEqual([{ start: 2, end: 2 }]);
    expect(ok(applyEdit('A\nB\nC\n', 'B\n', 'B1\nB2\n')).lines).toEqual([{ start: 2, end: 3 }]);
    expect(ok(applyEdit('a\rb', 'a\rb', 'z')).text).toBe('z');
  });

  it('E7 support: reported line ranges point at the replacement in the new text', () => {
    fc.assert(
      fc.property(lfText(), lfText(4).filter((s) => s.length > 0), lfText(6), (t, old, rep) => {
        fc.pre(old !== rep && t.includes(old));
        const r = ok(applyEdit(t, old, rep, true));
        const lines = r.text.split('\n');
        for (const range of r.lines) {
          expect(range.start).toBeGreaterThanOrEqual(1);
          const breaks = (rep.match(/\n/g) ?? []).length;
          expect(range.end - range.start).toBe(breaks > 0 && rep.endsWith('\n') ? breaks - 1 : breaks);
          expect(range.end).toBeLessThanOrEqual(lines.length);
        }
        expect(r.lines.length).toBe(r.replacements);
      }),
    );
  });
});

describe('nearMatchHint (E6)', () => {
  it('names indentation (tabs vs spaces), trailing whitespace, smart quotes and line-number prefixes', () => {
    const file = 'function f() {\n\treturn "x";\n}\nlet a = 1;   \n';
    expect(nearMatchHint(file, '    return "x";')).toMatch(/line 2.*indentation.*tabs.*spaces/);
    expect(nearMatchHint(file, 'let a = 1;\n')).toMatch(/line 4.*trailing whitespace/);
    expect(nearMatchHint(file, '\treturn “x”;')).toMatch(/line 2.*quote/);
    expect(nearMatchHint(file, '2: \treturn "x";\n3: }')).toMatch(/line-number prefixes/);
    expect(nearMatchHint(file, 'nothing like it')).toBeUndefined();
  });

  it('is reported by applyEdit on a miss and never applied', () => {
    const r = applyEdit('\tindented\n', '  indented', 'x');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('FS_EDIT_NOT_FOUND');
      expect(r.error.message).toMatch(/line 1/);
    }
  });
});


describe('editText errors name the edit', () => {
  it('a stale or unmet guard says "cannot edit", on the seam edit and on a native one alike', async () => {
    const { createMemoryFs } = await import('../../src/backends/memory/index.js');
    const { createFs, contentVersion } = await import('../../src/seam/index.js');
    const memory = createMemoryFs({ files: { '/w/a.txt': 'one\n' }, cwd: '/w' });
    const stale = { version: contentVersion(new TextEncoder().encode('other\n')) };
    const edit = { oldString: 'one', newString: 'two' };
    const seamOnly = createFs({ ...memory.provider, editText: undefined });
    for (const fs of [memory, seamOnly]) {
      const target = await fs.resolve('a.txt');
      await expect(fs.editText(target, edit, stale)).rejects.toMatchObject({
        code: 'FS_STALE_VERSION',
        message: expect.stringMatching(/^cannot edit "\/w\/a\.txt": /),
      });
    }
  });
});
