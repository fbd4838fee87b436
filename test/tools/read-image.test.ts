import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHarness, type ToolResult } from '../../src/index.js';
import { createMemoryFs, type MemoryEntry } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { aiSdkTools } from '../../src/adapters/ai-sdk.js';
import { toCallToolResult } from '../../src/mcp/result.js';
import {
  fsTools,
  readImageOutputSchema,
  toolResultContent,
  type FsToolsOptions,
  type ReadImageValue,
  type ReadResultValue,
} from '../../src/tools/index.js';
import { sniffImage } from '../../src/tools/image.js';
import { asciiGif, gifHeader, jpegHeader, png, webpHeader } from './images.js';

function harness(files: Record<string, MemoryEntry>, options: FsToolsOptions = {}) {
  const fs = createMemoryFs({ files, cwd: '/p' });
  const policy = createObservationPolicy();
  const ctx = createHarness({ fs, plugins: [policy, fsTools(options)] });
  const read = async (file_path: string) => (await ctx.tools.execute('read', { file_path }, { owner: 's' })) as ToolResult<ReadResultValue>;
  return { fs, ctx, policy, read };
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

describe('read: images', () => {
  it('returns a PNG as an image, found by content not name, and records the version read', async () => {
    const bytes = png(3, 2);
    const h = harness({ '/p/picture.txt': bytes });
    const r = await h.read('picture.txt');
    expect(r.isError, r.text).toBe(false);
    const v = r.value as ReadImageValue;
    expect(readImageOutputSchema.safeParse(v).success).toBe(true);
    expect(v).toMatchObject({ type: 'image', path: '/p/picture.txt', mediaType: 'image/png', width: 3, height: 2, size: bytes.length, data: b64(bytes) });
    expect(r.text).toBe(`<path>/p/picture.txt</path>\n<type>image</type>\n<content>\nimage/png image, 3x2 px, ${bytes.length} bytes\n</content>`);
    expect(h.policy.observation('s', '/p/picture.txt')).toEqual({ kind: 'present', version: v.version });
    // The observation authorises an overwrite without a re-read.
    const w = await h.ctx.tools.execute('write', { file_path: 'picture.txt', content: 'now text' }, { owner: 's' });
    expect(w.isError, w.text).toBe(false);
  });

  it('reads the size of JPEG, GIF and WebP headers', async () => {
    const h = harness({ '/p/a.jpg': jpegHeader(640, 480), '/p/b.bin': gifHeader(7, 9), '/p/c': webpHeader(1000, 2) });
    expect((await h.read('a.jpg')).value).toMatchObject({ mediaType: 'image/jpeg', width: 640, height: 480 });
    expect((await h.read('b.bin')).value).toMatchObject({ mediaType: 'image/gif', width: 7, height: 9 });
    expect((await h.read('c')).value).toMatchObject({ mediaType: 'image/webp', width: 1000, height: 2 });
  });

  it('takes a GIF whose header happens to be valid UTF-8 as an image, not text', async () => {
    const h = harness({ '/p/g.gif': asciiGif() });
    const r = await h.read('g.gif');
    expect(r.value).toMatchObject({ type: 'image', mediaType: 'image/gif', width: 0x4241, height: 0x4443 });
  });

  it('refuses an image over the limit with FS_TOO_LARGE, records nothing, and keeps FS_NOT_TEXT for other binaries', async () => {
    const bytes = png(40, 40);
    const h = harness({ '/p/big.png': bytes, '/p/blob.bin': new Uint8Array([0, 1, 2, 3]), '/p/bad.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]) }, { maxImageBytes: bytes.length - 1 });
    const big = await h.read('big.png');
    expect(big.error?.code).toBe('FS_TOO_LARGE');
    expect(big.text).toContain(`image/png image of ${bytes.length} bytes`);
    expect(h.policy.observation('s', '/p/big.png')).toBeUndefined();
    expect((await h.read('blob.bin')).error?.code).toBe('FS_NOT_TEXT');
    const bad = await h.read('bad.png');
    expect(bad.error?.code).toBe('FS_NOT_TEXT');
    expect(bad.text).toBe('Error: cannot read "/p/bad.png": not a UTF-8 text file: found a NUL byte at byte 8 (binary file); it starts like a PNG image, but its header is truncated or damaged');
    const exact = harness({ '/p/ok.png': bytes }, { maxImageBytes: bytes.length });
    expect((await exact.read('ok.png')).isError).toBe(false);
  });

  it('goes to MCP as image content, to the AI SDK as an image-data part, and to the Anthropic and OpenAI result shapes', async () => {
    const bytes = png();
    const h = harness({ '/p/i.png': bytes });
    const r = await h.read('i.png');
    const mcp = toCallToolResult(r);
    expect(mcp.content).toEqual([
      { type: 'text', text: r.text },
      { type: 'image', data: b64(bytes), mimeType: 'image/png' },
    ]);
    expect(mcp.structuredContent).toMatchObject({ type: 'image', width: 1 });

    const tools = aiSdkTools(h.ctx, { owner: 's' });
    const out = await tools.read!.toModelOutput!({ toolCallId: '1', input: { file_path: 'i.png' }, output: r } as never);
    expect(out).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: r.text },
        { type: 'image-data', data: b64(bytes), mediaType: 'image/png' },
      ],
    });

    expect(toolResultContent(r, 'anthropic')).toEqual({
      content: [
        { type: 'text', text: r.text },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(bytes) } },
      ],
    });
    expect(toolResultContent(r, 'openai')).toEqual({
      content: r.text,
      images: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${b64(bytes)}` } }],
    });
    const text = await harness({ '/p/t.txt': 'hi\n' }).read('t.txt');
    expect(toolResultContent(text, 'anthropic')).toEqual({ content: [{ type: 'text', text: text.text }] });
    expect(toCallToolResult(text).content).toHaveLength(1);
  });

  it('property: sniffImage reads back the size written into each header, and never throws on other bytes', () => {
    const side = fc.integer({ min: 1, max: 0xffff });
    fc.assert(
      fc.property(side, side, (w, hgt) => {
        expect(sniffImage(jpegHeader(w, hgt))).toEqual({ mediaType: 'image/jpeg', width: w, height: hgt });
        expect(sniffImage(gifHeader(w, hgt))).toEqual({ mediaType: 'image/gif', width: w, height: hgt });
        expect(sniffImage(webpHeader(w, hgt))).toEqual({ mediaType: 'image/webp', width: w, height: hgt });
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 64 }), (w, hgt) => {
        expect(sniffImage(png(w, hgt))).toEqual({ mediaType: 'image/png', width: w, height: hgt });
      }),
      { numRuns: 30 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.constantFrom([], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [0xff, 0xd8, 0xff], [0x47, 0x49, 0x46, 0x38, 0x39, 0x61]), (tail, head) => {
        const bytes = new Uint8Array([...head, ...tail]);
        expect(() => sniffImage(bytes)).not.toThrow();
      }),
    );
  });
});
