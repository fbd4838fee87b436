import fc from 'fast-check';
import { UNVERSIONED, type FileSystem, type FsTarget } from '../../seam/types.js';
import { deepEqual, equal, notEqual, seedFile, utf8, type Rule } from '../harness.js';

/** What `stat` says of a target apart from its version (and the mtime, which may move between calls). */
async function shape(fs: FileSystem, target: FsTarget, versioned: boolean) {
  const info = await fs.stat(target, { versioned });
  if (info === undefined) return undefined;
  return { type: info.type, size: info.type === 'file' ? info.size : undefined, executable: info.type === 'file' ? (info.executable ?? false) : undefined };
}

const entryArb = fc.record({
  kind: fc.constantFrom('file', 'directory', 'absent'),
  content: fc.string({ unit: fc.constantFrom('a', 'é', '\n', '😀'), maxLength: 40 }),
});

export const unversionedRules: Rule[] = [
  {
    id: 'V5',
    title: 'stat without a version agrees with stat on existence, type, size and the executable bit, and reports UNVERSIONED',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('a file of a few bytes and a directory', async () => {
        const dir = ctx.dir();
        const { target } = await seedFile(fs, `${dir}/f.txt`, 'hello\n');
        deepEqual(await shape(fs, target, false), { type: 'file', size: 6, executable: false }, 'stat of a 6-byte file without a version');
        deepEqual(await shape(fs, await fs.resolve(dir), false), await shape(fs, await fs.resolve(dir), true), 'stat of a directory with and without a version');
      });
      await ctx.check(
        'files, directories and nothing',
        fc.asyncProperty(entryArb, async ({ kind, content }) => {
          const dir = ctx.dir();
          await fs.mkdir(await fs.resolve(dir));
          const path = `${dir}/x`;
          if (kind === 'file') await seedFile(fs, path, content);
          if (kind === 'directory') await fs.mkdir(await fs.resolve(path));
          const target = await fs.resolve(path);
          deepEqual(await shape(fs, target, false), await shape(fs, target, true), `stat of a ${kind} with and without a version`);
          const info = await fs.stat(target, { versioned: false });
          equal(info?.version, kind === 'absent' ? undefined : UNVERSIONED, `the version of an unversioned stat of a ${kind}`);
        }),
      );
    },
  },
  {
    id: 'V6',
    title: "a directory's version changes when its entries' names change, and only then",
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('adding, rewriting, nesting and removing entries', async () => {
        const dir = ctx.dir();
        const d = await fs.resolve(dir);
        await fs.mkdir(d);
        const version = async () => (await fs.stat(d))?.version as string | undefined;
        const empty = await version();
        const a = await seedFile(fs, `${dir}/a.txt`, 'one');
        const withA = await version();
        notEqual(withA, empty, 'after a file was added');
        await fs.writeText(a.target, 'two');
        equal(await version(), withA, 'after a file was rewritten: the names are the same');
        await seedFile(fs, `${dir}/sub/b.txt`, 'b');
        const withSub = await version();
        notEqual(withSub, withA, 'after a subdirectory was added');
        await seedFile(fs, `${dir}/sub/c.txt`, 'c');
        equal(await version(), withSub, 'after a file was added below a subdirectory');
        await fs.rename(a.target, await fs.resolve(`${dir}/z.txt`));
        const renamed = await version();
        notEqual(renamed, withSub, 'after a file was renamed');
        await fs.rename(await fs.resolve(`${dir}/z.txt`), a.target);
        equal(await version(), withSub, 'after the same names came back');
        await fs.remove(a.target);
        notEqual(await version(), withSub, 'after a file was removed');
      });
      if (ctx.subject.outOfBand !== undefined) {
        const outOfBand = ctx.subject.outOfBand;
        await ctx.example('a file added behind the seam', async () => {
          const dir = ctx.dir();
          const d = await fs.resolve(dir);
          await fs.mkdir(d);
          const before = (await fs.stat(d))?.version;
          await outOfBand.writeBytes(`${dir}/new.txt`, utf8('x'));
          notEqual((await fs.stat(d))?.version as string | undefined, before, 'after another process added a file');
        });
      }
    },
  },
];
