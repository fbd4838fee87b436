import fc from 'fast-check';
import type { FileSystem, FsExpect, FsWriteIntent } from '../../seam/types.js';
import { bytesEqual, deepEqual, equal, ok, rejects, utf8, type Rule } from '../harness.js';

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
    title:
      'openRead and swapFrom, where the provider has them, agree with read and swap, and writeBytesFrom with writeBytes: the same bytes, versions and expectations',
    skipIf: (subject) =>
      subject.fs.writeBytesFrom !== undefined
        ? undefined
        : subject.provider === undefined
          ? 'the subject gives no provider, and its filesystem no writeBytesFrom'
          : subject.provider.openRead === undefined && subject.provider.swapFrom === undefined
            ? 'the provider streams nothing (openRead and swapFrom are optional)'
            : undefined,
    async run(ctx) {
      const { fs } = ctx;
      const provider = ctx.subject.provider;
      await ctx.check(
        'any content, start, piece size and expectation',
        fc.asyncProperty(textArb, fc.nat({ max: 80 }), fc.integer({ min: 1, max: 7 }), textArb, fc.constantFrom('current', 'stale', 'absent', 'any'), async (initial, start, piece, next, kind) => {
          const path = `${ctx.dir()}/f.txt`;
          const target = await fs.resolve(path);
          const before = await fs.writeBytes(target, utf8(initial));
          if (provider?.openRead) {
            const whole = await provider.read(target, { maxBytes: 1 << 20 });
            const stream = await provider.openRead(target, { maxBytes: 0, start });
            equal(stream.size, whole.bytes.byteLength, 'openRead: the size of the whole file');
            equal(stream.version as string | undefined, whole.version, 'openRead: the version read gives');
            bytesEqual(await gather(stream.chunks), whole.bytes.subarray(start), `openRead from byte ${start}: the bytes from there`);
            let code: string | undefined;
            await provider.openRead(await fs.resolve(`${path}.missing`), { maxBytes: 0 }).catch((err: { code?: string }) => (code = err.code));
            equal(code, 'FS_NOT_FOUND', 'openRead of an absent file');
          }
          if (provider?.swapFrom) {
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
          if (fs.writeBytesFrom) await writeFromCase(fs, `${path}.w`, initial, next, piece, kind);
        }),
        0.5,
      );
    },
  },
];

/**
 * writeBytesFrom agrees with writeBytes: a held intent publishes the streamed bytes (the version
 * returned is what a read gives, the size theirs); a broken one is the same error, nothing changed.
 */
async function writeFromCase(fs: FileSystem, path: string, initial: string, next: string, piece: number, kind: string): Promise<void> {
  const target = await fs.resolve(path);
  const before = await fs.writeBytes(target, utf8(initial));
  const stale = (await fs.writeBytes(await fs.resolve(`${path}.other`), utf8(`${initial}!`))).version;
  const intent: FsWriteIntent | undefined =
    kind === 'current' ? { kind: 'replaceIfVersion', version: before.version } : kind === 'stale' ? { kind: 'replaceIfVersion', version: stale } : kind === 'absent' ? { kind: 'createIfAbsent' } : undefined;
  const bytes = utf8(next);
  const label = `writeBytesFrom with ${kind === 'any' ? 'no intent' : `intent ${kind}`}`;
  if (kind === 'stale' || kind === 'absent') {
    await rejects(fs.writeBytesFrom!(target, inPieces(bytes, piece), intent), kind === 'stale' ? 'FS_STALE_VERSION' : 'FS_NOT_OBSERVED', label);
    bytesEqual((await fs.readBytes(target, { maxBytes: 1 << 20 })).bytes, utf8(initial), `${label}: nothing changed`);
    return;
  }
  const outcome = await fs.writeBytesFrom!(target, inPieces(bytes, piece), intent);
  const now = await fs.readBytes(target, { maxBytes: 1 << 20 });
  bytesEqual(now.bytes, bytes, `${label}: the bytes streamed`);
  equal(outcome.version as string, now.version as string, `${label}: the version returned is what read gives`);
  equal(outcome.size, bytes.byteLength, `${label}: the size`);
  equal(outcome.operation, 'update', `${label}: an update`);
  const fresh = await fs.resolve(`${path}.new`);
  const created = await fs.writeBytesFrom!(fresh, inPieces(bytes, piece), { kind: 'createIfAbsent' });
  equal(created.operation, 'create', `${label}: a create where nothing was`);
  await fs.remove(fresh);
}
