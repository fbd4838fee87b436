import fc from 'fast-check';
import { checkNarrowedWalk } from './walk-narrow.js';
import type { FileSystem, FsDirEntry, FsTarget, FsWalkEntry } from '../../seam/index.js';
import {
  bytesEqual,
  bytesOf,
  deepEqual,
  describeSettled,
  equal,
  expectUnchanged,
  fail,
  interleave,
  ok,
  rejects,
  seedFile,
  settle,
  utf8,
  type Rule,
  type RuleContext,
} from '../harness.js';

/** Path segments for generated trees: few, so that names collide and directories nest. */
const segmentArb = fc.constantFrom('a', 'b', 'c', 'é', '😀', 'ﬀ');
export const relPathArb = fc.array(segmentArb, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));

/** Every entry that walking `top` by hand with listDir gives, in tree order (the D4 reference). */
export async function listRecursively(fs: FileSystem, top: FsTarget, limit: number): Promise<FsWalkEntry[]> {
  const out: FsWalkEntry[] = [];
  const visit = async (dir: FsTarget, prefix: string): Promise<void> => {
    for (const entry of await fs.listDir(dir)) {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      out.push({ ...entry, path });
      if (out.length > limit) fail(`listing ${top.displayPath} by hand gave more than ${limit} entries: the listing loops`);
      const key = dir.targetKey as string;
      if (entry.type === 'directory' && entry.target.targetKey === (key.endsWith('/') ? `${key}${entry.name}` : `${key}/${entry.name}`)) {
        await visit(entry.target, path);
      }
    }
  };
  await visit(top, '');
  return out;
}

export async function walkAll(fs: FileSystem, top: FsTarget, limit: number, wantsStats?: (path: string, name: string) => boolean): Promise<FsWalkEntry[]> {
  const out: FsWalkEntry[] = [];
  for await (const entry of fs.walk(top, wantsStats ? { wantsStats } : {})) {
    out.push(entry);
    if (out.length > limit) fail(`walk of ${top.displayPath} gave more than ${limit} entries: it loops`);
  }
  return out;
}

export const shape = (e: FsDirEntry & { path?: string }) => ({ path: e.path, name: e.name, type: e.type, targetKey: e.target.targetKey, size: e.size });
export const bare = (e: FsDirEntry & { path?: string }) => ({ path: e.path, name: e.name, type: e.type, targetKey: e.target.targetKey });

/** Builds the tree of `paths` under `dir` (a file at each path, directories for the rest) and returns the files made. */
export async function buildTree(fs: FileSystem, dir: string, paths: readonly string[]): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const rel of paths) {
    const target = await fs.resolve(`${dir}/${rel}`);
    // A path below a file made earlier is skipped; a file over a directory made earlier too.
    const result = await settle(fs.writeText(target, `content of ${rel}\n`), `write ${rel}`);
    if (result.ok) files.set(rel, `content of ${rel}\n`);
  }
  return files;
}

export async function typeOf(fs: FileSystem, path: string): Promise<string | undefined> {
  return (await fs.stat(await fs.resolve(path)))?.type;
}

export const dirRules: Rule[] = [
  {
    id: 'D1',
    title: 'mkdir creates parents; over a file it is FS_NOT_DIRECTORY; an existing directory is no error',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'nested directories, twice, and over files',
        fc.asyncProperty(relPathArb, async (rel) => {
          const dir = ctx.dir();
          const target = await fs.resolve(`${dir}/${rel}`);
          await fs.mkdir(target);
          const parts = rel.split('/');
          for (let i = 1; i <= parts.length; i++) {
            const p = `${dir}/${parts.slice(0, i).join('/')}`;
            equal(await typeOf(fs, p), 'directory', `after mkdir ${rel}, ${p}`);
          }
          await fs.mkdir(target);
          deepEqual(await fs.listDir(target), [], 'a directory made twice is still an empty directory');
          const file = await seedFile(fs, `${dir}/file.txt`, 'a file\n');
          await rejects(fs.mkdir(file.target), 'FS_NOT_DIRECTORY', 'mkdir over a file');
          await rejects(fs.mkdir(await fs.resolve(`${dir}/file.txt/${rel}`)), 'FS_NOT_DIRECTORY', 'mkdir below a file');
          await expectUnchanged(fs, file.target, { bytes: file.bytes, version: file.version }, 'the file after mkdir over and below it');
        }),
        0.5,
      );
    },
  },
  {
    id: 'D2',
    title: 'rmdir of a non-empty directory without recursive is refused and removes nothing',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'trees removed with and without recursive',
        fc.asyncProperty(fc.array(relPathArb, { minLength: 1, maxLength: 5 }), async (paths) => {
          const dir = ctx.dir();
          const files = await buildTree(fs, `${dir}/t`, paths);
          const top = await fs.resolve(`${dir}/t`);
          const before = await listRecursively(fs, top, 1000);
          await rejects(fs.rmdir(top), 'FS_NOT_EMPTY', 'rmdir of a non-empty directory');
          deepEqual((await listRecursively(fs, top, 1000)).map(shape), before.map(shape), 'the tree after a refused rmdir');
          for (const [rel, text] of files) equal((await fs.readText(await fs.resolve(`${dir}/t/${rel}`))).text, text, `${rel} after a refused rmdir`);
          const [first] = files.keys();
          await rejects(fs.rmdir(await fs.resolve(`${dir}/t/${first}`)), 'FS_NOT_DIRECTORY', 'rmdir of a file');
          await rejects(fs.rmdir(await fs.resolve(`${dir}/missing`)), 'FS_NOT_FOUND', 'rmdir of a missing directory');
          await fs.rmdir(top, { recursive: true });
          equal(await typeOf(fs, `${dir}/t`), undefined, 'a directory removed recursively');
          for (const rel of files.keys()) equal(await typeOf(fs, `${dir}/t/${rel}`), undefined, `${rel} after the recursive rmdir`);
          const empty = await fs.resolve(`${dir}/empty`);
          await fs.mkdir(empty);
          await fs.rmdir(empty);
          equal(await typeOf(fs, `${dir}/empty`), undefined, 'an empty directory removed');
        }),
        0.5,
      );
    },
  },
  {
    id: 'D3',
    title: 'rename is atomic and guarded: the file is at one name, never both or neither; a stale guard moves nothing',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('guards and destinations', async () => {
        const dir = ctx.dir();
        const a = await seedFile(fs, `${dir}/a.txt`, 'a\n');
        const b = await seedFile(fs, `${dir}/b.txt`, 'b\n');
        await rejects(fs.rename(a.target, b.target), 'FS_ALREADY_EXISTS', 'rename onto an existing file without replace');
        await rejects(fs.rename(a.target, b.target, { replace: a.version }), 'FS_STALE_VERSION', 'rename guarded by a wrong destination version');
        await rejects(fs.rename(a.target, await fs.resolve(`${dir}/c.txt`), { expect: b.version }), 'FS_STALE_VERSION', 'rename guarded by a wrong source version');
        await rejects(fs.rename(await fs.resolve(`${dir}/none`), await fs.resolve(`${dir}/c.txt`)), 'FS_NOT_FOUND', 'rename of a missing file');
        await expectUnchanged(fs, a.target, { bytes: a.bytes, version: a.version }, 'the source after refused renames');
        await expectUnchanged(fs, b.target, { bytes: b.bytes, version: b.version }, 'the destination after refused renames');
        equal(await typeOf(fs, `${dir}/c.txt`), undefined, 'nothing at a refused destination');
        await fs.rename(a.target, b.target, { expect: a.version, replace: b.version });
        equal(await typeOf(fs, `${dir}/a.txt`), undefined, 'the source name after a rename');
        equal((await fs.stat(b.target))?.version as string | undefined, a.version, 'the moved file keeps its version');
        // A move onto its own name (or an alias of it) changes nothing, and still checks its guard.
        await fs.rename(b.target, await fs.resolve(`${dir}/./b.txt`));
        await rejects(fs.rename(b.target, b.target, { expect: b.version }), 'FS_STALE_VERSION', 'a move onto itself with a stale guard');
        bytesEqual((await bytesOf(fs, b.target))!, a.bytes, 'a move onto itself keeps the file');
        const deep = await fs.resolve(`${dir}/new/deeper/moved.txt`);
        await fs.rename(b.target, deep);
        bytesEqual((await bytesOf(fs, deep))!, a.bytes, 'a rename creates the missing parents of its destination');
      });
      await ctx.example('a directory moves with everything below it', async () => {
        const dir = ctx.dir();
        const files = await buildTree(fs, `${dir}/src`, ['x.txt', 'sub/y.txt', 'sub/deeper/z.txt']);
        await fs.mkdir(await fs.resolve(`${dir}/src/empty`));
        const src = await fs.resolve(`${dir}/src`);
        const before = (await listRecursively(fs, src, 1000)).map((e) => `${e.type} ${e.path}`);
        await rejects(fs.rename(src, await fs.resolve(`${dir}/src/sub/inside`)), 'FS_INVALID_ARGUMENT', 'a directory moved inside itself');
        const dst = await fs.resolve(`${dir}/dst`);
        await fs.mkdir(dst);
        await fs.rename(src, dst, { replace: true });
        equal(await typeOf(fs, `${dir}/src`), undefined, 'the old directory name');
        deepEqual((await listRecursively(fs, dst, 1000)).map((e) => `${e.type} ${e.path}`), before, 'the moved tree');
        for (const [rel, text] of files) equal((await fs.readText(await fs.resolve(`${dir}/dst/${rel}`))).text, text, `${rel} after the move`);
      });
      const cfs = ctx.concurrentFs;
      await ctx.check(
        'listings racing a rename see exactly one name',
        fc.asyncProperty(fc.scheduler(), fc.array(fc.nat(2), { minLength: 1, maxLength: 4 }), fc.nat(2), async (s, readers, renameGroup) => {
          const dir = ctx.dir();
          const { target, bytes } = await seedFile(cfs, `${dir}/old.txt`, 'moving\n');
          const to = await cfs.resolve(`${dir}/new.txt`);
          const parent = await cfs.resolve(dir);
          const tasks: (() => Promise<unknown>)[] = [() => cfs.rename(target, to), ...readers.map(() => () => cfs.listDir(parent))];
          const results = await interleave(s, tasks, [renameGroup, ...readers]);
          const labels = ['rename', ...readers.map((_, i) => `listing #${i}`)];
          const summary = describeSettled(results, labels);
          results.forEach((r, i) => ok(r.status === 'fulfilled', `${labels[i]} failed (${summary})`));
          for (const [i, r] of results.slice(1).entries()) {
            const names = (r as PromiseFulfilledResult<FsDirEntry[]>).value.map((e) => e.name);
            equal(names.length, 1, `listing #${i} during a rename saw ${JSON.stringify(names)}, not exactly one name (${summary})`);
          }
          bytesEqual((await bytesOf(cfs, to))!, bytes, 'the content at the new name');
        }),
        0.5,
      );
    },
  },
  {
    id: 'D4',
    title: 'walk agrees with a recursive listDir, also when asked to spare stats',
    async run(ctx) {
      const { fs } = ctx;
      const symlink = ctx.subject.capabilities?.symlinks ? ctx.subject.setup?.symlink : undefined;
      await ctx.check(
        'names, types, targets and order, links included',
        fc.asyncProperty(fc.array(relPathArb, { maxLength: 8 }), fc.array(fc.tuple(relPathArb, relPathArb), { maxLength: 3 }), async (paths, links) => {
          const dir = ctx.dir();
          await fs.mkdir(await fs.resolve(`${dir}/t`));
          await buildTree(fs, `${dir}/t`, paths);
          if (symlink) {
            for (const [at, to] of links) {
              // Links to directories (and to the walked directory itself) must not be descended into.
              await symlink.call(ctx.subject.setup, `${dir}/t/${to}`, `${dir}/t/${at}-link`).catch(() => undefined);
            }
            await symlink.call(ctx.subject.setup, `${dir}/t`, `${dir}/t/loop`).catch(() => undefined);
          }
          const top = await fs.resolve(`${dir}/t`);
          const expected = await listRecursively(fs, top, 1000);
          const walked = await walkAll(fs, top, 1000);
          deepEqual(walked.map(shape), expected.map(shape), `walk of ${top.displayPath}`);
          // The stat hints may drop sizes and mtimes, never an entry, a type or a target.
          const asked: string[] = [];
          const spared = await walkAll(fs, top, 1000, (path) => (asked.push(path), false));
          deepEqual(spared.map(bare), expected.map(bare), `walk of ${top.displayPath} sparing stats`);
          for (const path of asked) ok(expected.some((e) => e.path === path && e.type === 'file'), `walk asked wantsStats about "${path}", which is not a file`);
          // The narrow hint may leave out files of other endings, never anything else, and says how many.
          for (const endings of [['.txt'], ['a', 'é']]) await checkNarrowedWalk(fs, top, expected, endings);
          const listed = await fs.listDir(top, { stats: false });
          deepEqual(listed.map(bare), (await fs.listDir(top)).map(bare), `listDir of ${top.displayPath} with stats: false`);
        }),
        0.5,
      );
      await ctx.example('a walk of a file or a missing directory', async () => {
        const dir = ctx.dir();
        const file = await seedFile(fs, `${dir}/f.txt`, 'x');
        await rejects(walkAll(fs, file.target, 10), 'FS_NOT_DIRECTORY', 'walk of a file');
        await rejects(walkAll(fs, await fs.resolve(`${dir}/missing`), 10), 'FS_NOT_FOUND', 'walk of a missing directory');
      });
    },
  },
  {
    id: 'P4',
    title: 'links are followed by stat and listDir; dangling links are absent or `other`; a file is not a directory',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('listing a file or a missing directory; paths below a file', async () => {
        const dir = ctx.dir();
        const file = await seedFile(fs, `${dir}/f.txt`, 'a file\n');
        await rejects(fs.listDir(file.target), 'FS_NOT_DIRECTORY', 'listing a file');
        await rejects(fs.listDir(await fs.resolve(`${dir}/missing`)), 'FS_NOT_FOUND', 'listing a missing directory');
        const below = await fs.resolve(`${dir}/f.txt/child.txt`);
        equal(await fs.stat(below), undefined, 'stat of a path below a file');
        await rejects(fs.writeText(below, 'x'), 'FS_NOT_DIRECTORY', 'writeText below a file');
        await rejects(fs.writeBytes(below, utf8('x')), 'FS_NOT_DIRECTORY', 'writeBytes below a file');
        await rejects(fs.mkdir(below), 'FS_NOT_DIRECTORY', 'mkdir below a file');
        // Reading what cannot exist: either code says so.
        for (const [what, op] of [['readText', () => fs.readText(below)], ['listDir', () => fs.listDir(below)]] as const) {
          const read = await settle<unknown>(op(), `${what} below a file`);
          ok(!read.ok && (read.error.code === 'FS_NOT_FOUND' || read.error.code === 'FS_NOT_DIRECTORY'), `${what} below a file: expected FS_NOT_FOUND or FS_NOT_DIRECTORY, got ${read.ok ? 'success' : `${read.error.code}: ${read.error.message}`}`);
        }
        await expectUnchanged(fs, file.target, { bytes: file.bytes, version: file.version }, 'the file after operations below it');
      });
      const symlink = ctx.subject.capabilities?.symlinks ? ctx.subject.setup?.symlink : undefined;
      if (!symlink) return;
      const link = (target: string, path: string) => symlink.call(ctx.subject.setup, target, path);
      await ctx.example('links to files and directories, dangling and looping links', async () => {
        const dir = ctx.dir();
        const file = await seedFile(fs, `${dir}/real.txt`, 'real\n');
        await fs.mkdir(await fs.resolve(`${dir}/realdir`));
        await link('real.txt', `${dir}/to-file`);
        await link('realdir', `${dir}/to-dir`);
        await link('nowhere/missing.txt', `${dir}/dangling`);
        await link('loop-b', `${dir}/loop-a`);
        await link('loop-a', `${dir}/loop-b`);
        const info = await fs.stat(await fs.resolve(`${dir}/to-file`));
        equal(info?.type, 'file', 'stat of a link to a file');
        equal(info?.version as string | undefined, file.version, 'stat of a link to a file gives its version');
        equal(await typeOf(fs, `${dir}/to-dir`), 'directory', 'stat of a link to a directory');
        equal(await typeOf(fs, `${dir}/dangling`), undefined, 'stat of a dangling link');
        const types = Object.fromEntries((await fs.listDir(await fs.resolve(dir))).map((e) => [e.name, e.type]));
        deepEqual(
          types,
          { dangling: 'other', 'loop-a': 'other', 'loop-b': 'other', 'real.txt': 'file', realdir: 'directory', 'to-dir': 'directory', 'to-file': 'file' },
          'listing types (links followed; dangling and looping links are other)',
        );
        await fs.writeText(await fs.resolve(`${dir}/dangling`), 'made\n');
        equal((await fs.readText(await fs.resolve(`${dir}/nowhere/missing.txt`))).text, 'made\n', 'a write through a dangling link creates its target');
        equal((await fs.resolve(`${dir}/dangling`)).targetKey as string, (await fs.resolve(`${dir}/nowhere/missing.txt`)).targetKey, 'the link is kept');
      });
    },
  },
];

export const layerRules: Rule[] = [
  {
    id: 'O1',
    title: 'a layered filesystem never changes its lower layer before a commit',
    skipIf: (subject) => (subject.lower === undefined ? 'the subject is not layered (no lower)' : undefined),
    async run(ctx: RuleContext) {
      const { fs } = ctx;
      const lower = ctx.subject.lower!;
      await ctx.check(
        'writes, edits, removes, renames and directories through the upper',
        fc.asyncProperty(fc.array(fc.constantFrom('write', 'edit', 'remove', 'rename', 'mkdir', 'rmdir'), { minLength: 1, maxLength: 6 }), async (ops) => {
          const dir = ctx.dir();
          // The lower's own files, made before the layer sees them.
          const lowerFile = await seedFile(lower, `${dir}/kept.txt`, 'lower content\n');
          await seedFile(lower, `${dir}/sub/inner.txt`, 'inner\n');
          const before = await listRecursively(lower, await lower.resolve(dir), 100);
          for (const op of ops) {
            const at = (p: string) => fs.resolve(`${dir}/${p}`);
            // Failures are fine (a file already moved); only the lower matters here.
            await settle(
              (async () => {
                if (op === 'write') await fs.writeText(await at('kept.txt'), 'upper content\n');
                else if (op === 'edit') await fs.editText(await at('kept.txt'), { oldString: 'content', newString: 'edited' });
                else if (op === 'remove') await fs.remove(await at('kept.txt'));
                else if (op === 'rename') await fs.rename(await at('sub'), await at('moved'));
                else if (op === 'mkdir') await fs.mkdir(await at('made/here'));
                else await fs.rmdir(await at('sub'), { recursive: true });
              })(),
              op,
            );
          }
          const after = await listRecursively(lower, await lower.resolve(dir), 100);
          deepEqual(after.map((e) => `${e.type} ${e.path}`), before.map((e) => `${e.type} ${e.path}`), `the lower's tree after ${ops.join(', ')}`);
          await expectUnchanged(lower, lowerFile.target, { bytes: lowerFile.bytes, version: lowerFile.version }, `the lower's file after ${ops.join(', ')}`);
          equal((await lower.readText(await lower.resolve(`${dir}/sub/inner.txt`))).text, 'inner\n', `the lower's inner file after ${ops.join(', ')}`);
        }),
        0.5,
      );
    },
  },
];
