import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countLf, countLfPlain, simdLineCount } from '../../src/seam/line-count.js';

/** Bytes mostly LF and a few others, so runs of breaks and of non-breaks both occur. */
const bytesWithBreaks = (maxLength: number) => fc.uint8Array({ maxLength, min: 8, max: 13 });

describe('counting line breaks', () => {
  it('the WebAssembly SIMD module loads on the supported Node versions', () => {
    expect(simdLineCount()).toBe(true);
  });

  it('the SIMD count equals a byte-by-byte count on any range', () => {
    fc.assert(
      fc.property(bytesWithBreaks(5000), fc.nat(), fc.nat(), (bytes, a, b) => {
        const from = bytes.length === 0 ? 0 : a % (bytes.length + 1);
        const to = from + (bytes.length - from === 0 ? 0 : b % (bytes.length - from + 1));
        expect(countLf(bytes, from, to)).toBe(countLfPlain(bytes, from, to));
        expect(countLf(bytes)).toBe(countLfPlain(bytes));
      }),
      { numRuns: 500 },
    );
  });

  it('counts across window edges and past a lane overflow (all breaks, lengths around 16, 4080 and the window)', () => {
    for (const len of [255, 256, 257, 4079, 4080, 4081, 4096 + 15, 65536 * 4 - 1, 65536 * 4, 65536 * 4 + 17, 3 * 65536 * 4 + 5]) {
      const all = new Uint8Array(len).fill(10);
      expect(countLf(all)).toBe(len);
      const some = Uint8Array.from({ length: len }, (_, i) => (i % 7 === 3 ? 10 : 0x41));
      expect(countLf(some, 1, len - 1)).toBe(countLfPlain(some, 1, len - 1));
      // A subarray at an odd offset of its buffer.
      expect(countLf(some.subarray(3))).toBe(countLfPlain(some, 3));
    }
  });
});
