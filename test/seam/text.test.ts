import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FsError, decodeText, encodeText, textForWrite, textProblem } from '../../src/seam/index.js';
import { firstInvalidUtf8 } from '../../src/seam/text.js';

const enc = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const dec = (b: Uint8Array) => Buffer.from(b).toString('utf8');

describe('text semantics', () => {
  it('T1: valid UTF-8 round-trips through decode/encode byte for byte, BOM included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.boolean(), (s, bom) => {
        fc.pre(!s.includes('\0') && !s.startsWith('\uFEFF'));
        const bytes = encodeText(s, bom);
        const d = decodeText(bytes, 'x');
        expect(d.text).toBe(s);
        expect(d.bom).toBe(bom);
        expect(Buffer.compare(encodeText(d.text, d.bom), bytes)).toBe(0);
      }),
    );
  });

  it('T1: the first invalid byte offset agrees with a reference decoder', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const at = firstInvalidUtf8(bytes);
        let valid = true;
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        } catch {
          valid = false;
        }
        expect(at === -1).toBe(valid);
        if (at > 0) new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, at));
      }),
    );
  });

  it('T1: says what it found — NUL, invalid UTF-8 at byte N, UTF-16 BOM', () => {
    expect(textProblem(enc('ab\0c'))).toMatch(/NUL byte at byte 2/);
    expect(textProblem(new Uint8Array([0x61, 0x62, 0xc3, 0x28]))).toMatch(/invalid UTF-8 at byte 2/);
    expect(textProblem(new Uint8Array([0xff, 0xfe, 0x61, 0x00]))).toMatch(/UTF-16/);
    expect(textProblem(enc('ok\r\n'))).toBeUndefined();
    const err = (() => {
      try {
        decodeText(new Uint8Array([0xed, 0xa0, 0x80]), 'cannot read "/x"');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(FsError);
    expect((err as FsError).code).toBe('FS_NOT_TEXT');
  });

  it('L4/L5: write keeps an existing BOM and CRLF style; content with CRLF and new files are written as given', () => {
    const crlfBom = encodeText('a\r\nb\r\n', true);
    expect(dec(textForWrite('x\ny\n', crlfBom))).toBe('\uFEFFx\r\ny\r\n');
    expect(dec(textForWrite('x\r\ny\n', crlfBom))).toBe('\uFEFFx\r\ny\n');
    expect(dec(textForWrite('x\ny\n', undefined))).toBe('x\ny\n');
    expect(dec(textForWrite('x\ny\n', enc('a\nb\n')))).toBe('x\ny\n');
    expect(dec(textForWrite('\uFEFFx', crlfBom))).toBe('\uFEFFx');
    // A non-text existing file gives no style to keep.
    expect(dec(textForWrite('x\n', new Uint8Array([0, 1, 2])))).toBe('x\n');
  });

  it('L5: LF-only content over a CRLF-dominant file gets CRLF and nothing else changes', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[^\r\n\0]{0,8}$/), { maxLength: 6 }), (lines) => {
        const content = lines.join('\n');
        const out = dec(textForWrite(content, enc('p\r\nq\r\n')));
        expect(out).toBe(lines.join(content.includes('\n') ? '\r\n' : '\n'));
      }),
    );
  });
});
