import fc from 'fast-check';
import type { FsExpect } from '../../seam/types.js';
import { bytesEqual, deepEqual, equal, ok, utf8, type Rule } from '../harness.js';

const textArb = fc.string({ unit: fc.constantFrom('a', 'é', '\n', '\r\n', '😀'), maxLength: 60 });

async function gather(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const c of chunks) parts.push(c);
  return Buffer.concat(parts);
}

async function* inPieces(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

export const streamRules: Rule[] = [
  {
    id: 'V7',
    title: 'openRead and swapFrom, where the provider has them, agree with read and swap: the same bytes, versions and expectations',
    skipIf: (subject) =>
      subject.provider === undefined
        ? 'the subject gives no provider'
        : subject.provider.openRead === undefined && subject.provider.swapFrom === undefined
          ? 'the provider streams nothing (openRead and swapFrom are optional)'
          : undefined,
    async run(ctx) {
      const { fs } = ctx;
      const provider = ctx.subject.provider!;
      await ctx.check(
        'any content, start, piece size and expectation',
        fc.asyncProperty(textArb, fc.nat({ max: 80 }), fc.integer({ min: 1, max: 7 }), textArb, fc.constantFrom('current', 'stale', 'absent', 'any'), async (initial, start, piece, next, kind) => {
          const path = `${ctx.dir()}/f.txt`;
          const target = await fs.resolve(path);
          const before = await fs.writeBytes(target, utf8(initial));
          if (provider.openRead) {
            const whole = await provider.read(target, { maxBytes: 1 << 20 });
            const stream = await provider.openRead(target, { maxBytes: 0, start });
            equal(stream.size, whole.bytes.byteLength, 'openRead: the size of the whole file');
            equal(stream.version as string | undefined, whole.version, 'openRead: the version read gives');
            bytesEqual(await gather(stream.chunks), whole.bytes.subarray(start), `openRead from byte ${start}: the bytes from there`);
            let code: string | undefined;
            await provider.openRead(await fs.resolve(`${path}.missing`), { maxBytes: 0 }).catch((err: { code?: string }) => (code = err.code));
            equal(code, 'FS_NOT_FOUND', 'openRead of an absent file');
          }
          if (provider.swapFrom) {
            const stale = (await fs.writeBytes(await fs.resolve(`${path}.other`), utf8(`${initial}!`))).version;
            const expect: FsExpect =
              kind === 'current' ? { kind: 'present', version: before.version } : kind === 'stale' ? { kind: 'present', version: stale } : { kind };
            const holds = kind === 'current' || kind === 'any';
            const bytes = utf8(next);
            const result = await provider.swapFrom(target, { expect, source: inPieces(bytes, piece) });
            const label = `swapFrom expecting ${kind}`;
            if (!holds) {
              deepEqual(result, { ok: false, current: { kind: 'present', version: before.version } }, `${label}: the report`);
              bytesEqual((await provider.read(target, { maxBytes: 1 << 20 })).bytes, utf8(initial), `${label}: nothing changed`);
              return;
            }
            ok(result.ok, `${label} must succeed, got ${JSON.stringify(result)}`);
            equal(result.existed, true, `${label}: existed`);
            const now = await provider.read(target, { maxBytes: 1 << 20 });
            bytesEqual(now.bytes, bytes, `${label}: the bytes streamed`);
            equal(result.version as string | undefined, now.version, `${label}: the version returned is what read gives`);
          }
        }),
        0.5,
      );
    },
  },
];
