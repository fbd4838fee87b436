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
  {
    id: 'K2',
    title: 'removeLink and renameLink act on the link itself: what it leads to stays untouched, a moved link keeps its text',
    skipIf: (subject) => (subject.capabilities?.linkCreation ? undefined : 'the subject creates no links (capability `linkCreation`)'),
    async run(ctx) {
      const { fs } = ctx;
      const own = (path: string) => fs.resolve(path, { noFollow: true });
      await ctx.check(
        'remove a link, move a link, replace a file by a moved link',
        fc.asyncProperty(linkTextArb, fc.boolean(), async (text, replacing) => {
          const dir = ctx.dir();
          const file = await seedFile(fs, `${dir}/f.txt`, 'content\n');
          await fs.symlink!(await own(`${dir}/a`), text);
          // K1 judges the text as written; here the text read before the move is what must stay.
          const held = await fs.readlink!(await own(`${dir}/a`));
          await fs.symlink!(await own(`${dir}/gone`), text);
          await fs.removeLink!(await own(`${dir}/gone`));
          await rejects(fs.readlink!(await own(`${dir}/gone`)), 'FS_NOT_FOUND', 'readlink of a removed link');
          const other = replacing ? await seedFile(fs, `${dir}/b`, 'replaced\n') : undefined;
          if (other) await rejects(fs.renameLink!(await own(`${dir}/a`), await own(`${dir}/b`)), 'FS_ALREADY_EXISTS', 'a move onto a file without replace');
          if (other) await expectUnchanged(fs, other.target, { bytes: other.bytes, version: other.version }, 'the file a refused move would replace');
          await fs.renameLink!(await own(`${dir}/a`), await own(`${dir}/b`), { replace: replacing });
          equal(await fs.readlink!(await own(`${dir}/b`)), held, 'the moved link keeps its text');
          await rejects(fs.readlink!(await own(`${dir}/a`)), 'FS_NOT_FOUND', 'readlink at the old name');
          await expectUnchanged(fs, file.target, { bytes: file.bytes, version: file.version }, 'the file the links lead to');
          const names = (await fs.listDir(await fs.resolve(dir))).map((e) => e.name).join(',');
          equal(names, 'b,f.txt', 'the directory after the removal and the move');
        }),
        0.5,
      );
      await ctx.example('what is no link is refused, and a dangling link is removed and moved', async () => {
        const dir = ctx.dir('refusals');
        const file = await seedFile(fs, `${dir}/f.txt`, 'stays\n');
        await fs.mkdir(await fs.resolve(`${dir}/sub`));
        await rejects(fs.removeLink!(file.target), 'FS_INVALID_ARGUMENT', 'removeLink of a file');
        await rejects(fs.removeLink!(await own(`${dir}/sub`)), 'FS_INVALID_ARGUMENT', 'removeLink of a directory');
        await rejects(fs.removeLink!(await own(`${dir}/absent`)), 'FS_NOT_FOUND', 'removeLink of nothing');
        await rejects(fs.renameLink!(file.target, await own(`${dir}/g.txt`)), 'FS_INVALID_ARGUMENT', 'renameLink of a file');
        await expectUnchanged(fs, file.target, { bytes: file.bytes, version: file.version }, 'the file after the refusals');
        await fs.symlink!(await own(`${dir}/dangling`), 'missing');
        await rejects(fs.renameLink!(await own(`${dir}/dangling`), await own(`${dir}/sub`), { replace: true }), 'FS_NOT_REGULAR_FILE', 'a link moved onto a directory');
        await rejects(fs.renameLink!(await own(`${dir}/dangling`), await own(`${dir}/no-dir/l`)), 'FS_NOT_FOUND', 'a link moved into a missing directory');
        await fs.renameLink!(await own(`${dir}/dangling`), await own(`${dir}/sub/moved`));
        equal(await fs.readlink!(await own(`${dir}/sub/moved`)), 'missing', 'a dangling link moved');
        await fs.removeLink!(await own(`${dir}/sub/moved`));
        equal((await fs.listDir(await fs.resolve(`${dir}/sub`))).length, 0, 'the directory after the dangling link went');
        // Through a link to a file, a followed target names the file: the link is not removed by removeLink.
        await fs.symlink!(await own(`${dir}/l`), 'f.txt');
        await rejects(fs.removeLink!(await fs.resolve(`${dir}/l`)), 'FS_INVALID_ARGUMENT', 'removeLink of a followed target');
        equal(await fs.readlink!(await own(`${dir}/l`)), 'f.txt', 'the link after a refused removal of what it leads to');
      });
    },
  },
];
