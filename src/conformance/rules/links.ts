import fc from 'fast-check';
import { equal, expectUnchanged, rejects, seedFile, type Rule } from '../harness.js';

/** Link texts as people write them: relative, climbing, absolute, dangling, not normalised. */
const linkTextArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('f.txt', './f.txt', 'sub/../f.txt', 'missing.txt', 'a//b', '../elsewhere', '/abs/path', 'dir/'),
  fc.stringMatching(/^[a-z./]{1,12}$/),
);

export const linkRules: Rule[] = [
  {
    id: 'K1',
    title: 'symlink creates a link holding exactly its text, never followed at creation; readlink gives the text back; nothing is replaced',
    skipIf: (subject) => (subject.capabilities?.linkCreation ? undefined : 'the subject creates no links (capability `linkCreation`)'),
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'create, read back, refuse a second creation',
        fc.asyncProperty(linkTextArb, async (text) => {
          const dir = ctx.dir();
          const file = await seedFile(fs, `${dir}/f.txt`, 'content\n');
          const at = await fs.resolve(`${dir}/link`, { noFollow: true });
          await fs.symlink!(at, text);
          equal(await fs.readlink!(await fs.resolve(`${dir}/link`, { noFollow: true })), text, 'readlink gives the text as written');
          // Creation follows nothing: a text naming a missing file makes no file there.
          if (text === 'missing.txt') equal(await fs.stat(await fs.resolve(`${dir}/missing.txt`)), undefined, 'the dangling destination');
          await rejects(fs.symlink!(at, 'other'), 'FS_ALREADY_EXISTS', 'a second link at the same name');
          equal(await fs.readlink!(at), text, 'the first link after a refused second');
          await rejects(fs.symlink!(file.target, 'other'), 'FS_ALREADY_EXISTS', 'a link over a file');
          await expectUnchanged(fs, file.target, { bytes: file.bytes, version: file.version }, 'the file after a refused link over it');
        }),
        0.5,
      );
      await ctx.example('a link is followed by reads, and readlink refuses what is no link', async () => {
        const dir = ctx.dir('follow');
        const file = await seedFile(fs, `${dir}/f.txt`, 'through the link\n');
        await fs.mkdir(await fs.resolve(`${dir}/sub`));
        await fs.symlink!(await fs.resolve(`${dir}/l.txt`, { noFollow: true }), './sub/../f.txt');
        equal(await fs.readlink!(await fs.resolve(`${dir}/l.txt`, { noFollow: true })), './sub/../f.txt', 'a text not normalised');
        const followed = await fs.resolve(`${dir}/l.txt`);
        equal((await fs.readText(followed)).text, 'through the link\n', 'a read through the link');
        equal((await fs.stat(followed))?.version, file.version, 'the version through the link');
        await rejects(fs.readlink!(file.target), 'FS_INVALID_ARGUMENT', 'readlink of a file');
        await rejects(fs.readlink!(await fs.resolve(`${dir}/absent`, { noFollow: true })), 'FS_NOT_FOUND', 'readlink of nothing');
        await rejects(fs.symlink!(await fs.resolve(`${dir}/no-such-dir/l`, { noFollow: true }), 'f.txt'), 'FS_NOT_FOUND', 'a link in a missing directory');
        await rejects(fs.symlink!(await fs.resolve(`${dir}/bad`, { noFollow: true }), ''), 'FS_INVALID_ARGUMENT', 'an empty link text');
      });
    },
  },
];
