import fc from 'fast-check';
import type { FileSystem } from '../../seam/index.js';
import { deepEqual, describeSettled, equal, fail, interleave, isFsErrorLike, ok, settle, type Rule, type RuleContext } from '../harness.js';
import { SPREAD, after } from './moments.js';
import { listRecursively, relPathArb, typeOf } from './dirs.js';

/**
 * Builds files at `files` and empty directories at `dirs` under `top` (a path below a file made
 * earlier is skipped), and returns the tree as listDir gives it.
 */
async function buildWithDirs(fs: FileSystem, top: string, files: readonly string[], dirs: readonly string[]) {
  await fs.mkdir(await fs.resolve(top));
  for (const rel of dirs) await settle(fs.mkdir(await fs.resolve(`${top}/${rel}`)), `mkdir ${rel}`);
  for (const rel of files) await settle(fs.writeText(await fs.resolve(`${top}/${rel}`), `content of ${rel}\n`), `write ${rel}`);
  return listRecursively(fs, await fs.resolve(top), 1000);
}

/** After a recursive rmdir of `top`: nothing that was below it is found by path, and `top` made again is empty. */
async function expectNothingBelow(fs: FileSystem, top: string, was: readonly { path: string; type: string }[]): Promise<void> {
  equal(await typeOf(fs, top), undefined, `${top} after its recursive rmdir`);
  for (const entry of was) {
    const path = `${top}/${entry.path}`;
    equal(await typeOf(fs, path), undefined, `stat of ${entry.type} ${path} after the recursive rmdir of ${top}`);
    const target = await fs.resolve(path);
    const read = entry.type === 'directory' ? fs.listDir(target) : fs.readBytes(target, { maxBytes: 1 << 20 });
    ok(!(await settle<unknown>(read, `reading ${path}`)).ok, `${entry.type} ${path} can still be read after the recursive rmdir of ${top}`);
  }
  await fs.mkdir(await fs.resolve(top));
  deepEqual(
    (await listRecursively(fs, await fs.resolve(top), 1000)).map((e) => `${e.type} ${e.path}`),
    [],
    `${top} made again after its recursive rmdir (entries that were below it came back)`,
  );
}

/**
 * One rmdir of an empty directory racing writers of files in it. Whatever wins, a write that reported
 * success has its file, with its content, afterwards.
 */
async function checkRace(ctx: RuleContext, run: (rmdir: () => Promise<unknown>, writers: (() => Promise<unknown>)[]) => Promise<PromiseSettledResult<unknown>[]>, count: number): Promise<void> {
  const fs = ctx.concurrentFs;
  const dir = `${ctx.dir()}/d`;
  const target = await fs.resolve(dir);
  await fs.mkdir(target);
  const files = await Promise.all(Array.from({ length: count }, (_, i) => fs.resolve(`${dir}/f${i}.txt`)));
  const results = await run(
    () => fs.rmdir(target),
    files.map((f, i) => () => fs.writeText(f, `written by #${i}\n`)),
  );
  const summary = describeSettled(results, ['rmdir', ...files.map((_, i) => `write #${i}`)]);
  for (const [i, result] of results.entries()) {
    if (result.status === 'rejected' && !isFsErrorLike(result.reason)) {
      fail(`${i === 0 ? 'the rmdir' : `write #${i - 1}`} rejected with a non-FsError (${summary})`);
    }
  }
  for (const [i, file] of files.entries()) {
    if (results[i + 1]!.status !== 'fulfilled') continue;
    const read = await settle(fs.readText(file), `read ${file.displayPath}`);
    ok(read.ok, `write #${i} reported success, but its file is gone (${summary})`);
    equal(read.value.text, `written by #${i}\n`, `the file of write #${i} (${summary})`);
  }
}

export const rmdirRules: Rule[] = [
  {
    id: 'D6',
    title: 'a recursive rmdir leaves nothing below: no file or directory that was under it is found, and the directory made again is empty',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('files and empty directories three levels down', async () => {
        const top = `${ctx.dir()}/t`;
        const was = await buildWithDirs(fs, top, ['a.txt', 'sub/b.txt', 'sub/deeper/c.txt'], ['sub/deeper/empty', 'other/empty']);
        await fs.rmdir(await fs.resolve(top), { recursive: true });
        await expectNothingBelow(fs, top, was);
      });
      await ctx.check(
        'random trees of files and empty directories',
        fc.asyncProperty(fc.array(relPathArb, { maxLength: 4 }), fc.array(relPathArb, { maxLength: 3 }), async (files, dirs) => {
          const top = `${ctx.dir()}/t`;
          const was = await buildWithDirs(fs, top, files, dirs);
          await fs.rmdir(await fs.resolve(top), { recursive: true });
          await expectNothingBelow(fs, top, was);
        }),
        0.25,
      );
    },
  },
  {
    id: 'D7',
    title: 'rmdir racing a write into the directory loses no write: the write fails, or its file is there with its content',
    async run(ctx) {
      await ctx.example('writers starting at spread moments after the rmdir', () =>
        checkRace(
          ctx,
          async (rmdir, writers) => {
            const removal = rmdir();
            const writes = writers.map((write, i) => after(SPREAD[i]!).then(write));
            return Promise.allSettled([removal, ...writes]);
          },
          SPREAD.length,
        ),
      );
      await ctx.check(
        'an rmdir and writers interleaved',
        fc.asyncProperty(fc.scheduler(), fc.nat(2), fc.array(fc.nat(2), { minLength: 1, maxLength: 3 }), async (s, rmdirGroup, writerGroups) =>
          checkRace(ctx, (rmdir, writers) => interleave(s, [rmdir, ...writers], [rmdirGroup, ...writerGroups]), writerGroups.length),
        ),
        0.25,
      );
    },
  },
];
