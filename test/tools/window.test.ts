import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitLines } from '../../src/seam/index.js';
import { readWindow } from '../../src/tools/read.js';
import { referenceWindow } from './window-reference.js';

/** Splits `text` at the given UTF-16 offsets, which may fall inside a surrogate pair or a CRLF. */
function pieces(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let at = 0;
  for (const p of points) {
    out.push(text.slice(at, p));
    at = p;
  }
  out.push(text.slice(at));
  return out;
}

async function* stream(parts: readonly string[]): AsyncGenerator<string> {
  yield* parts;
}

// Lone surrogates and pairs split across chunks are not valid text, but readWindow is public.
const unit = fc.constantFrom('a', 'bc', 'é', '€', '😀', '\uD83D', '\uDE00', '\n', '\r', '\r\n', ' ', 'x'.repeat(30), '€'.repeat(25), '😀'.repeat(12));
const textArb = fc.array(unit, { maxLength: 60 }).map((a) => a.join(''));

describe('readWindow matches the reference implementation', () => {
  it('for any text, chunking, window, line limit and byte cap', async () => {
    await fc.assert(
      fc.asyncProperty(
        textArb,
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.record({
          offset: fc.integer({ min: 1, max: 15 }),
          limit: fc.integer({ min: 1, max: 15 }),
          maxLineChars: fc.integer({ min: 1, max: 80 }),
          maxBytes: fc.integer({ min: 1, max: 400 }),
        }),
        async (text, cuts, options) => {
          const parts = pieces(text, cuts);
          const expected = await referenceWindow(stream(parts), options);
          expect(await readWindow(stream(parts), options)).toEqual(expected);
          expect(await readWindow(parts, options)).toEqual(expected);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('with the default limits on windows that reach the byte cap', async () => {
    const line = fc.array(fc.constantFrom('a', 'é', '😀', '\r', 'long '.repeat(40)), { maxLength: 30 }).map((a) => a.join(''));
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 400 }), fc.integer({ min: 1, max: 300 }), async (lines, offset) => {
        const options = { offset, limit: 2000, maxLineChars: 2000, maxBytes: 51_200 };
        const text = lines.join('\n');
        const expected = await referenceWindow(stream([text]), options);
        expect(await readWindow([text], options)).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });
});

describe('readWindow is the streamed form of the one line splitter', () => {
  it('with room for everything, gives exactly the lines splitLines gives, however the text is chunked', async () => {
    await fc.assert(
      fc.asyncProperty(textArb, fc.array(fc.nat(), { maxLength: 8 }), async (text, cuts) => {
        const options = { offset: 1, limit: 1e6, maxLineChars: 1e6, maxBytes: 1e9 };
        const window = await readWindow(stream(pieces(text, cuts)), options);
        const broken = text.endsWith('\n');
        const expected = text === '' ? [] : splitLines(broken ? text.slice(0, -1) : text, broken);
        expect(window.lines.map((l) => l.text)).toEqual(expected);
        expect(window.totalLines).toBe(expected.length);
      }),
      { numRuns: 1000 },
    );
  });
});
