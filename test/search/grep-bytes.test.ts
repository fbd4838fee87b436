import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { FsError, splitLines, type FileSystem, type FsTarget } from '../../src/seam/index.js';
import type { Candidates } from '../../src/search/grep-bytes.js';
import { streamLines } from '../../src/search/grep-large.js';
import { grep } from '../../src/search/index.js';
import { requiredLiteral } from '../../src/search/literal.js';

// A large file is searched on its bytes when every match holds a literal: only the lines with
// the literal's bytes are decoded. These compare that path with decoding every line.

/** Lines of short pieces (multibyte characters, lone CRs, the literals below), LF or CRLF between. */
const text = fc
  .tuple(
    fc.boolean(),
    fc.array(fc.array(fc.constantFrom('ab', 'a', 'b', 'x', 'é', '€', '😀', '\r', ' ', 'é€', '\uFEFF'), { maxLength: 12 }).map((p) => p.join('')), { maxLength: 30 }),
    fc.array(fc.constantFrom('\n', '\r\n'), { minLength: 30, maxLength: 30 }),
    fc.boolean(),
  )
  .map(([bom, lines, breaks, endBreak]) => (bom ? '\uFEFF' : '') + lines.map((l, i) => l + (i < lines.length - 1 || endBreak ? breaks[i] : '')).join(''));

/** Patterns that hold a literal (so the byte path is taken), with anchors and CRs around it. */
const PATTERNS = [/ab/, /é€/, /^ab/, /ab$/, /b\r$/, /a.*€/, /😀 ?x/, /^\uFEFF?ab/, /\r/].filter((re) => requiredLiteral(re) !== undefined);

/** Splits `bytes` at the given cut points (anywhere, inside characters too). */
function chunked(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    if (c > from) out.push(bytes.subarray(from, c));
    from = Math.max(from, c);
  }
  return out;
}

/**
 * A file system whose one file streams in the given chunks. Asked to `reuse`, it hands each chunk
 * out in one buffer, scribbled over once the next is asked for: what the reader keeps must be a copy.
 */
const streaming = (chunks: Uint8Array[]): FileSystem =>
  ({
    streamBytes: async (_: FsTarget, options: { reuse?: boolean }) => ({
      size: chunks.reduce((n, c) => n + c.length, 0),
      version: 'v',
      chunks: (async function* () {
        const shared = Buffer.alloc(Math.max(0, ...chunks.map((c) => c.length)));
        for (const c of chunks) {
          if (!options.reuse) {
            yield c;
            continue;
          }
          shared.fill(0x41);
          shared.set(c);
          yield shared.subarray(0, c.length);
        }
        shared.fill(0x41);
      })(),
    }),
  }) as unknown as FileSystem;

/** Line numbers and texts of the matching lines, through streamLines decoding everything or only candidates. */
async function matchingLines(chunks: Uint8Array[], re: RegExp, batchBytes: number, bytePath: boolean): Promise<[number, string][]> {
  const found: [number, string][] = [];
  let line = 0;
  const take = (t: string, brokenAfter: boolean, number: (i: number) => number) => {
    splitLines(t, brokenAfter).forEach((l, i) => re.test(l) && found.push([number(i), l]));
  };
  const sink = {
    batch: async (t: string, brokenAfter: boolean) => {
      const first = line + 1;
      take(t, brokenAfter, (i) => first + i);
      line += splitLines(t, brokenAfter).length;
    },
    ...(bytePath ? { literal: { bytes: requiredLiteral(re)!, candidates: async (c: Candidates) => take(c.text, c.brokenAfter, (i) => c.numbers?.[i] ?? c.first + i) } } : {}),
  };
  const skip = await streamLines(streaming(chunks), {} as FsTarget, '/f', new AbortController().signal, sink, () => false, Infinity, batchBytes);
  expect(skip).toBeUndefined();
  return found;
}

describe('grep of a large file on its bytes', () => {
  it('finds the same lines, numbers and texts as decoding every line, however the bytes are chunked and batched', async () => {
    await fc.assert(
      fc.asyncProperty(text, fc.constantFrom(...PATTERNS), fc.array(fc.nat(), { maxLength: 12 }), fc.integer({ min: 1, max: 64 }), async (t, re, cuts, batch) => {
        const chunks = chunked(Buffer.from(t, 'utf8'), cuts);
        const whole = splitLines(t.replace(/^\uFEFF/, '').replace(/\n$/, ''), t.endsWith('\n'))
          .map((l, i): [number, string] => [i + 1, l])
          .filter(([, l]) => t !== '' && re.test(l));
        expect(await matchingLines(chunks, re, batch, false)).toEqual(whole);
        expect(await matchingLines(chunks, re, batch, true)).toEqual(whole);
      }),
      { numRuns: 600 },
    );
  });

  it('keeps a U+FEFF that starts the second line when a batch ends after an empty first line', async () => {
    const chunks = [Buffer.from('\n\uFEFFé€')];
    for (const bytePath of [false, true]) expect(await matchingLines(chunks, /é€/, 1, bytePath)).toEqual([[2, '\uFEFFé€']]);
  });

  it('decodes a part whole once most of its lines hold the literal', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => (i % 3 === 0 ? `x${i}` : `ab${i}`));
    const t = lines.join('\r\n') + '\r\n';
    const want = lines.map((l, i): [number, string] => [i + 1, l]).filter(([, l]) => /ab\d+$/.test(l));
    for (const batch of [1, 1000, 1 << 20]) {
      expect(await matchingLines(chunked(Buffer.from(t), [7, 4099, 9000]), /ab\d+$/, batch, true)).toEqual(want);
    }
  });

  it('grep gives the same result over the text limit as within it', async () => {
    await fc.assert(
      fc.asyncProperty(text, fc.constantFrom(...PATTERNS, /[ab]x/), fc.integer({ min: 1, max: 5 }), async (t, re, maxMatches) => {
        const small = createMemoryFs({ cwd: '/', files: { 'f.txt': t }, maxTextBytes: 8 });
        const big = createMemoryFs({ cwd: '/', files: { 'f.txt': t } });
        const options = { path: '/f.txt', maxMatches, maxLineBytes: 7 };
        const strip = (r: Awaited<ReturnType<typeof grep>>) => ({ ...r, matches: r.matches.map(({ target: _, ...m }) => m) });
        expect(strip(await grep(small, re, options))).toEqual(strip(await grep(big, re, options)));
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a file with a NUL or invalid UTF-8 after the match as before (the bytes are checked as they come)', async () => {
    for (const bad of ['\0', '\xff']) {
      const fs = createMemoryFs({ cwd: '/', files: {}, maxTextBytes: 8 });
      await fs.writeBytes(await fs.resolve('/f.txt'), Buffer.concat([Buffer.from('ab\nx\n'), Buffer.from(bad, 'latin1'), Buffer.from('\nab\n')]));
      const r = await grep(fs, 'ab', { path: '/f.txt' });
      expect(r.matches).toEqual([]);
      expect(r.skipped.map((s) => [s.reason, s.code])).toEqual([['binary', 'FS_NOT_TEXT']]);
    }
    expect(FsError).toBeDefined();
  });
});
