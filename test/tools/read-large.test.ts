import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readWindow } from '../../src/tools/read.js';
import { readLargeWindow } from '../../src/tools/read-large.js';

/** The UTF-8 bytes of `text` cut at the given byte offsets (inside a sequence or a CRLF too). */
function byteChunks(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const p of points) {
    out.push(bytes.subarray(at, p));
    at = p;
  }
  out.push(bytes.subarray(at));
  return out;
}

async function* stream<T>(parts: readonly T[]): AsyncGenerator<T> {
  yield* parts;
}

const unit = fc.constantFrom('a', 'bc', 'é', '€', '😀', '\n', '\r', '\r\n', ' ', 'x'.repeat(30));
const textArb = fc.array(unit, { maxLength: 60 }).map((a) => a.join(''));

describe('readLargeWindow (V7): the window of a streamed file agrees with readWindow', () => {
  it('the same lines; the same total, or a lower bound past the last line shown when it stopped', async () => {
    await fc.assert(
      fc.asyncProperty(
        textArb,
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.record({
          offset: fc.integer({ min: 1, max: 15 }),
          limit: fc.integer({ min: 1, max: 15 }),
          maxLineChars: fc.integer({ min: 1, max: 80 }),
          maxBytes: fc.integer({ min: 1, max: 400 }),
        }),
        async (text, bom, cuts, options) => {
          const body = Buffer.from(text, 'utf8');
          const bytes = bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]) : body;
          const expected = await readWindow([text], options);
          const got = await readLargeWindow(stream(byteChunks(bytes, cuts)), options, 'cannot read "f"');
          expect(got.lines).toEqual(expected.lines);
          expect(got.cappedAtBytes).toEqual(expected.cappedAtBytes);
          if (bytes.length >= 3) expect(got.bom).toBe(bom);
          if (got.totalLinesAtLeast) {
            expect(got.totalLines).toBeLessThanOrEqual(expected.totalLines);
            expect(got.totalLines).toBeGreaterThan(got.lines.at(-1)?.number ?? options.offset - 1);
          } else expect(got.totalLines).toBe(expected.totalLines);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('names the first byte that is not text, wherever the chunks are cut', async () => {
    const bytes = Buffer.concat([Buffer.from('line one\nline two é\n'), Buffer.from([0xc3]), Buffer.from('\nmore\n')]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const parts = [bytes.subarray(0, cut), bytes.subarray(cut)];
      await expect(readLargeWindow(stream(parts), { offset: 3, limit: 5, maxLineChars: 100, maxBytes: 1000 }, 'f')).rejects.toThrow(
        'invalid UTF-8 at byte 21',
      );
    }
    const nul = Buffer.from('a\nb\0c\n');
    await expect(readLargeWindow(stream([nul]), { offset: 1, limit: 5, maxLineChars: 100, maxBytes: 1000 }, 'f')).rejects.toThrow('a NUL byte at byte 3');
  });
});
