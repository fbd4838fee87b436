import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { FsError } from '../../src/seam/index.js';
import { validUtf8Chunks } from '../../src/seam/text.js';

const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);
const CHUNK_BYTES = 64 * 1024;

async function streamed(fs: ReturnType<typeof createMemoryFs>, path: string): Promise<string[]> {
  const stream = await fs.streamText(await fs.resolve(path));
  const out: string[] = [];
  for await (const chunk of stream.chunks) out.push(chunk);
  return out;
}

/** Text over several chunks, rich in multi-byte and astral characters near any boundary. */
const bigText = fc
  .tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 3 }), fc.boolean())
  .map(([piece, pad, lead]) => {
    // Shifts where the chunk boundaries fall relative to the multi-byte characters.
    const unit = `${'x'.repeat(pad)}${piece}\u00e9\u{1F600}\r\n`;
    return `${lead ? '\uFEFF' : ''}${unit.repeat(Math.ceil((2.5 * CHUNK_BYTES) / Buffer.byteLength(unit)))}`;
  });

describe('streamText', () => {
  it('yields exactly the text readText gives, in well-formed chunks of at most 64 KiB, with or without a BOM', async () => {
    await fc.assert(
      fc.asyncProperty(bigText, fc.boolean(), async (text, withBom) => {
        const body = new Uint8Array(Buffer.from(text, 'utf8'));
        const bytes = withBom ? new Uint8Array([...BOM, ...body]) : body;
        const fs = createMemoryFs({ files: { '/t.txt': bytes } });
        const target = await fs.resolve('/t.txt');
        const read = await fs.readText(target);
        const stream = await fs.streamText(target);
        const chunks: string[] = [];
        for await (const chunk of stream.chunks) chunks.push(chunk);
        expect(chunks.join('')).toBe(read.text);
        // A leading U+FEFF in the bytes reads as a BOM; after a real BOM it is text.
        expect(read.text).toBe(withBom ? text : text.replace(/^\uFEFF/, ''));
        expect(chunks.length).toBeGreaterThan(1);
        for (const chunk of chunks) {
          expect(chunk.isWellFormed()).toBe(true);
          expect(Buffer.byteLength(chunk, 'utf8')).toBeLessThanOrEqual(CHUNK_BYTES);
        }
        expect({ bom: stream.bom, version: stream.version, size: stream.size }).toEqual({
          bom: read.bom,
          version: read.version,
          size: read.size,
        });
      }),
      { numRuns: 25 },
    );
  });

  it('keeps a U+FEFF that is text (after a BOM, or at the start of a later chunk)', async () => {
    const feffAtBoundary = `${'a'.repeat(CHUNK_BYTES)}\uFEFFz`;
    const fs = createMemoryFs({
      files: { '/double.txt': new Uint8Array([...BOM, ...BOM, 0x61]), '/edge.txt': feffAtBoundary },
    });
    expect((await streamed(fs, '/double.txt')).join('')).toBe('\uFEFFa');
    const chunks = await streamed(fs, '/edge.txt');
    expect(chunks).toHaveLength(2);
    expect(chunks[1]).toBe('\uFEFFz');
  });

  it('refuses non-text before the first chunk, with the message readText gives', async () => {
    const fs = createMemoryFs({
      files: {
        '/nul.bin': new Uint8Array([0x61, 0x00, 0x62]),
        '/bad.txt': new Uint8Array([...Buffer.from('a'.repeat(100_000)), 0xc3, 0x28]),
        '/utf16.txt': new Uint8Array([0xff, 0xfe, 0x61, 0x00]),
      },
    });
    for (const path of ['/nul.bin', '/bad.txt', '/utf16.txt']) {
      const target = await fs.resolve(path);
      const fromRead = await fs.readText(target).catch((e: unknown) => e);
      const fromStream = await fs.streamText(target).catch((e: unknown) => e);
      expect(fromStream).toBeInstanceOf(FsError);
      expect((fromStream as FsError).code).toBe('FS_NOT_TEXT');
      expect((fromStream as FsError).message).toBe((fromRead as FsError).message);
    }
  });

  it('stops with FS_ABORTED when the signal fires between chunks', async () => {
    const fs = createMemoryFs({ files: { '/big.txt': 'y'.repeat(3 * CHUNK_BYTES) } });
    const controller = new AbortController();
    const stream = await fs.streamText(await fs.resolve('/big.txt'), { signal: controller.signal });
    const seen: string[] = [];
    const run = (async () => {
      for await (const chunk of stream.chunks) {
        seen.push(chunk);
        controller.abort();
      }
    })();
    await expect(run).rejects.toMatchObject({ code: 'FS_ABORTED' });
    expect(seen).toHaveLength(1);
  });
});

describe('validUtf8Chunks', () => {
  it('splits only between UTF-8 sequences, whatever the chunk size', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.integer({ min: 1, max: 12 }), (text, max) => {
        // A replacement character in the input would make the no-U+FFFD check below meaningless.
        fc.pre(!text.includes('\uFFFD'));
        const bytes = new Uint8Array(Buffer.from(text, 'utf8'));
        const chunks = [...validUtf8Chunks(bytes, max)];
        expect(chunks.join('')).toBe(text);
        for (const chunk of chunks) {
          expect(chunk.isWellFormed()).toBe(true);
          expect(chunk).not.toContain('\uFFFD');
          expect(Buffer.byteLength(chunk, 'utf8')).toBeLessThanOrEqual(Math.max(4, max));
        }
      }),
    );
  });
});
