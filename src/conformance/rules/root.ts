import type { FileSystem, FsTarget } from '../../seam/index.js';
import { deepEqual, expectUnchanged, rejects, seedFile, settle, type Rule } from '../harness.js';
import { buildTree, listRecursively } from './dirs.js';

/** What the root holds: its own entries, and the whole tree of one directory in it. */
async function treeOf(fs: FileSystem, root: FsTarget, dir: FsTarget): Promise<{ top: string[] | string; tree: string[] | string }> {
  // A listing that fails is reported as such, so a tree that is gone shows in the comparison.
  const top = await settle(fs.listDir(root), 'listing the root');
  const tree = await settle(listRecursively(fs, dir, 100), `listing ${dir.displayPath}`);
  return {
    top: top.ok ? top.value.map((e) => `${e.type} ${e.name}`) : `cannot list: ${top.error.code}`,
    tree: tree.ok ? tree.value.map((e) => `${e.type} ${e.path} ${e.size ?? ''}`) : `cannot list: ${tree.error.code}`,
  };
}

export const rootRules: Rule[] = [
  {
    id: 'D5',
    title: 'the root is never removed, moved or replaced: rmdir, remove and rename of it, and rename onto it, are FS_INVALID_ARGUMENT and change nothing',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('rmdir, remove and rename of the root, and rename onto it', async () => {
        const dir = ctx.dir();
        await buildTree(fs, `${dir}/tree`, ['a.txt', 'sub/b.txt', 'sub/deeper/c.txt']);
        const file = await seedFile(fs, `${dir}/file.txt`, 'a file\n');
        const empty = await fs.resolve(`${dir}/empty`);
        await fs.mkdir(empty);
        // The root as a caller names it; the provider's key for it may be anything.
        const root = await fs.resolve(fs.root ?? '/');
        const top = await fs.resolve(dir);
        const before = await treeOf(fs, root, top);
        const attempts: [string, () => Promise<unknown>][] = [
          ['rmdir of the root', () => fs.rmdir(root)],
          ['rmdir of the root with recursive', () => fs.rmdir(root, { recursive: true })],
          ['remove of the root', () => fs.remove(root)],
          ['rename of the root into a directory below it', async () => fs.rename(root, await fs.resolve(`${dir}/moved-root`))],
          ['rename of the root onto an empty directory with replace', () => fs.rename(root, empty, { replace: true })],
          ['rename of a file onto the root', () => fs.rename(file.target, root)],
          ['rename of a file onto the root with replace', () => fs.rename(file.target, root, { replace: true })],
          ['rename of an empty directory onto the root with replace', () => fs.rename(empty, root, { replace: true })],
        ];
        for (const [what, attempt] of attempts) {
          await rejects(attempt(), 'FS_INVALID_ARGUMENT', what);
          deepEqual(await treeOf(fs, root, top), before, `the root's entries and the tree in it after ${what}`);
        }
        await expectUnchanged(fs, file.target, { bytes: file.bytes, version: file.version }, 'a file after the refusals');
      });
    },
  },
];
