import { createFs, type FileSystem, type FsProvider, type FsTarget, type FsUsage } from '../../seam/index.js';
import { countedFigures } from '../../seam/quota-figures.js';
import { deepEqual, equal, rejects, type Rule } from '../harness.js';

const fill = (n: number, byte = 0x71) => new Uint8Array(n).fill(byte);

async function* pieces(n: number, size: number): AsyncIterable<Uint8Array> {
  for (let i = 0; i < n; i++) yield fill(size);
}

async function absent(fs: FileSystem, target: FsTarget, what: string): Promise<void> {
  equal(await fs.stat(target), undefined, `${what}: nothing there`);
}

/** What the store counts now (its own figure, or the whole view). */
async function inUse(provider: FsProvider): Promise<FsUsage> {
  return countedFigures(provider, await provider.resolve(provider.root ?? '/', {}), undefined);
}

export const quotaRules: Rule[] = [
  {
    id: 'Q1',
    title:
      'under a quota (maxBytes, maxFiles), a write, a stream or a batch that would pass it is refused whole with FS_QUOTA_EXCEEDED and changes nothing; what fits is written; a provider that counts for itself (usage) follows each change',
    skipIf: (subject) => (subject.provider === undefined ? 'no provider: a quota is a seam of its own over it' : undefined),
    async run(ctx) {
      const provider = ctx.subject.provider!;
      await ctx.example('writes up to the limit and past it', async () => {
        const used = await inUse(provider);
        const fs = createFs(provider, { cwd: ctx.fs.cwd, maxBytes: used.bytes + 100, maxFiles: used.files + 2 });
        const dir = ctx.dir();
        const [a, b, c] = await Promise.all(['a.bin', 'b.bin', 'c.bin'].map((name) => fs.resolve(`${dir}/${name}`)));
        await fs.writeBytes(a!, fill(60));
        if (provider.usage) {
          deepEqual(await provider.usage(undefined, {}), { bytes: used.bytes + 60, files: used.files + 1 }, 'usage() after a new file of 60 bytes');
          deepEqual(await provider.usage(a!, {}), { bytes: 60, files: 1 }, 'usage(file) of that file');
        }
        await rejects(fs.writeBytes(b!, fill(60)), 'FS_QUOTA_EXCEEDED', 'a write of 60 bytes with 40 left');
        await absent(fs, b!, 'after the refused write');
        await rejects(fs.writeBytesFrom!(b!, pieces(6, 10)), 'FS_QUOTA_EXCEEDED', 'a stream of 60 bytes with 40 left');
        await absent(fs, b!, 'after the refused stream');
        await rejects(fs.writeText(a!, 'x'.repeat(101)), 'FS_QUOTA_EXCEEDED', 'a rewrite of the file to 101 bytes');
        equal((await fs.stat(a!))?.size, 60, 'the file after the refused rewrite');
        if (fs.applyChanges) {
          const create = (target: FsTarget) => ({ kind: 'write', target, bytes: fill(30), intent: { kind: 'createIfAbsent' } }) as const;
          await rejects(fs.applyChanges([create(b!), create(c!)]), 'FS_QUOTA_EXCEEDED', 'a batch of two files of 30 bytes with 40 left');
          await absent(fs, b!, 'after the refused batch');
          await absent(fs, c!, 'after the refused batch');
        }
        // Exactly the limit fits.
        await fs.writeBytes(b!, fill(40));
        await rejects(fs.writeBytes(c!, fill(0)), 'FS_QUOTA_EXCEEDED', 'a third file with room for two');
        await absent(fs, c!, 'after the refused third file');
        // A removal makes room.
        await fs.remove(a!);
        await fs.writeBytes(c!, fill(50));
        if (provider.usage) deepEqual(await provider.usage(undefined, {}), { bytes: used.bytes + 90, files: used.files + 2 }, 'usage() at the end');
      });
    },
  },
];
