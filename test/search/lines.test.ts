import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { UNVERSIONED, splitLines } from '../../src/seam/index.js';
import { grep } from '../../src/search/index.js';
import { readWindow } from '../../src/tools/read.js';

/** grep's lines are the seam's one splitter's, and the read tool's. */
describe('grep lines', () => {
  it('keeps a lone CR at the end of a file, as read shows it', async () => {
    const fs = createMemoryFs({ cwd: '/p', files: { 'f.txt': 'a\r\nlast\r' } });
    const r = await grep(fs, /^/);
    expect(r.matches.map((m) => m.text)).toEqual(['a', 'last\r']);
    expect((await grep(fs, 'last\\r$')).matches.map((m) => m.line)).toEqual([2]);
  });

  it('splitLines: CR of a CRLF dropped, a lone CR kept, a last CR kept only without a break after it', () => {
    expect(splitLines('a\r\nb\rc\r', true)).toEqual(['a', 'b\rc']);
    expect(splitLines('a\r\nb\rc\r', false)).toEqual(['a', 'b\rc\r']);
  });

  it('equals the read tool line for line, whatever the text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('a', '\r', '\n', 'é', '😀', ' '), { minLength: 1, maxLength: 40 }).map((cs) => cs.join('')), async (text) => {
        const fs = createMemoryFs({ cwd: '/p', files: { 'f.txt': text } });
        const found = (await grep(fs, /^/, { maxLineBytes: 10_000 })).matches.map((m) => m.text);
        const read = (await readWindow([text], { offset: 1, limit: 1000, maxLineChars: 10_000, maxBytes: 1_000_000 })).lines.map((l) => l.text);
        expect(found).toEqual(read);
      }),
      { numRuns: 100 },
    );
  });

  it('reads without minting a version', async () => {
    const fs = createMemoryFs({ cwd: '/p', files: { 'f.txt': 'x\n' } });
    const stream = await fs.streamText(await fs.resolve('f.txt'), { unversioned: true });
    expect(stream.version).toBe(UNVERSIONED);
    expect((await fs.stat(await fs.resolve('f.txt')))!.version).not.toBe(UNVERSIONED);
  });
});
