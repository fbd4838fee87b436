import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeKeepingBom, lineBreaks, splitLines } from '../../src/seam/index.js';

describe('lineBreaks', () => {
  it('gives the lines splitLines gives and the break after each; joined they are the text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', '\r', '\n', '\r\n', 'é') }), (text) => {
        const { lines, breaks } = lineBreaks(text);
        expect(lines.map((l, i) => l + breaks[i]).join('')).toBe(text);
        expect(breaks.slice(0, -1).every((b) => b !== '')).toBe(true);
        if (text !== '') {
          const broken = text.endsWith('\n');
          expect(lines).toEqual(splitLines(broken ? text.slice(0, -1) : text, broken));
        } else expect(lines).toEqual([]);
      }),
    );
  });

  it('keeps a lone CR inside a line and tells CRLF from LF', () => {
    expect(lineBreaks('a\rb\r\nc\nd')).toEqual({ lines: ['a\rb', 'c', 'd'], breaks: ['\r\n', '\n', ''] });
    expect(lineBreaks('x\r')).toEqual({ lines: ['x\r'], breaks: [''] });
  });
});

describe('encodeKeepingBom', () => {
  it('adds exactly one BOM even when the text starts with U+FEFF', () => {
    expect([...encodeKeepingBom('\uFEFFa', true)]).toEqual([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x61]);
    expect([...encodeKeepingBom('a', false)]).toEqual([0x61]);
  });
});
