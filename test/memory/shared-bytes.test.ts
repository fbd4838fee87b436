import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';

// The memory provider hands out its own storage where nothing can change it: to the seam's text
// reads (`shared`) and to an edit's change function. Every write puts a new buffer in place of
// the old one, so bytes handed out keep what they held, whatever is written afterwards.
describe('memory: bytes handed out without a copy', () => {
  it('what an edit replaced and a shared read returned stay as they were after later writes (property)', async () => {
    const edits = fc.array(fc.record({ to: fc.constantFrom('x', 'yy', 'long '.repeat(20)), append: fc.boolean() }), { minLength: 1, maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(edits, async (steps) => {
        const fs = createMemoryFs({ files: { '/f.txt': 'start MARK end\n' } });
        const t = await fs.resolve('/f.txt');
        const kept: { bytes: Uint8Array; copy: string }[] = [];
        const keep = (bytes: Uint8Array | undefined) => bytes && kept.push({ bytes, copy: Buffer.from(bytes).toString('latin1') });
        for (const { to, append } of steps) {
          const now = (await fs.readText(t)).text;
          keep((await fs.provider.read(t, { maxBytes: 1 << 20, shared: true })).bytes);
          const out = await fs.editText(t, { oldString: 'MARK', newString: `MARK${to}` }, undefined, { withBytes: true });
          keep(out.replaced);
          keep(out.published);
          expect(Buffer.from(out.replaced!).toString()).toBe(now);
          if (append) await fs.writeText(t, `${(await fs.readText(t)).text}more\n`);
        }
        for (const { bytes, copy } of kept) expect(Buffer.from(bytes).toString('latin1')).toBe(copy);
      }),
      { numRuns: 50 },
    );
  });

  it('readBytes still returns a copy: changing it changes nothing stored', async () => {
    const fs = createMemoryFs({ files: { '/f.txt': 'abc' } });
    const t = await fs.resolve('/f.txt');
    const { bytes } = await fs.readBytes(t, { maxBytes: 10 });
    bytes[0] = 0x7a;
    expect((await fs.readText(t)).text).toBe('abc');
  });
});
