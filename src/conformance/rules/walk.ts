import fc from 'fast-check';
import type { FileSystem, FsTarget, FsWalkEntry } from '../../seam/index.js';
import { deepEqual, fail, settle, utf8, type Rule, type RuleContext } from '../harness.js';
import { bare, buildTree, listRecursively, relPathArb, shape, walkAll } from './dirs.js';

/**
 * Walks `top` pruning every directory named in `names`, and removes each pruned directory as soon
 * as the walk gives it (before the walk may list it). Returns what the walk gave and what it
 * reported unreadable.
 */
async function walkRemovingPruned(fs: FileSystem, top: FsTarget, names: ReadonlySet<string>, reportUnreadable: boolean) {
  const given: FsWalkEntry[] = [];
  const reported: string[] = [];
  const pruned = (entry: FsWalkEntry) => entry.type === 'directory' && names.has(entry.name);
  const options = {
    prune: pruned,
    ...(reportUnreadable ? { onUnreadable: (entry: FsWalkEntry, error: { code: string }) => void reported.push(`${entry.path} (${error.code})`) } : {}),
  };
  for await (const entry of fs.walk(top, options)) {
    given.push(entry);
    if (given.length > 1000) fail(`walk of ${top.displayPath} gave more than 1000 entries: it loops`);
    if (pruned(entry)) await fs.rmdir(entry.target, { recursive: true });
  }
  return { given, reported };
}

/** The listing of `top` without what lies below a directory named in `names`. */
function withoutPruned(listing: readonly FsWalkEntry[], names: ReadonlySet<string>): FsWalkEntry[] {
  const cuts = listing.filter((e) => e.type === 'directory' && names.has(e.name)).map((e) => `${e.path}/`);
  return listing.filter((e) => !cuts.some((cut) => e.path.startsWith(cut)));
}

async function checkPrunedWalk(ctx: RuleContext, paths: readonly string[], names: ReadonlySet<string>, reportUnreadable: boolean): Promise<void> {
  const { fs } = ctx;
  const dir = `${ctx.dir()}/t`;
  await fs.mkdir(await fs.resolve(dir));
  await buildTree(fs, dir, paths);
  const top = await fs.resolve(dir);
  const expected = withoutPruned(await listRecursively(fs, top, 1000), names);
  const label = `a walk of ${dir} pruning ${JSON.stringify([...names])}${reportUnreadable ? ' with onUnreadable' : ''}, each pruned directory removed once given`;
  const walked = await settle(walkRemovingPruned(fs, top, names, reportUnreadable), label);
  if (!walked.ok) fail(`${label} failed: ${walked.error.code}: ${walked.error.message} (a pruned directory was listed)`);
  deepEqual(walked.value.reported, [], `${label}: directories reported unreadable (a pruned directory was listed)`);
  deepEqual(walked.value.given.map(bare), expected.map(bare), label);
}

type Change = 'write' | 'rewrite' | 'remove' | 'mkdir' | 'rmdir' | 'rename' | 'outOfBandWrite' | 'outOfBandRemove';
const changeArb = fc.tuple(fc.constantFrom<Change>('write', 'rewrite', 'remove', 'mkdir', 'rmdir', 'rename', 'outOfBandWrite', 'outOfBandRemove'), relPathArb, fc.nat());

/** Applies one change below `dir` (some are no-ops on a tree without what they need); returns what it did. */
async function change(ctx: RuleContext, dir: string, [kind, rel, pick]: [Change, string, number]): Promise<string> {
  const { fs } = ctx;
  const listing = await listRecursively(fs, await fs.resolve(dir), 1000);
  const files = listing.filter((e) => e.type === 'file');
  const dirs = listing.filter((e) => e.type === 'directory');
  const file = files[pick % Math.max(1, files.length)];
  const sub = dirs[pick % Math.max(1, dirs.length)];
  const oob = ctx.subject.outOfBand;
  const at = (p: string) => fs.resolve(`${dir}/${p}`);
  if (kind === 'write') await settle(fs.writeText(await at(`${rel}.new`), 'new\n'), 'write');
  else if (kind === 'rewrite' && file) await fs.writeText(file.target, `longer than it was: ${'x'.repeat(pick % 50)}\n`);
  else if (kind === 'remove' && file) await fs.remove(file.target);
  else if (kind === 'mkdir') await settle(fs.mkdir(await at(`${rel}-made`)), 'mkdir');
  else if (kind === 'rmdir' && sub) await fs.rmdir(sub.target, { recursive: true });
  else if (kind === 'rename' && file) await fs.rename(file.target, await at(`${file.path}.moved`));
  // Behind the seam a write below a file fails with whatever the store says: not this rule's concern.
  else if (kind === 'outOfBandWrite' && oob) await oob.writeBytes(`${dir}/${rel}.oob`, utf8('behind the seam\n')).catch(() => undefined);
  else if (kind === 'outOfBandRemove' && oob && file) await oob.remove(`${dir}/${file.path}`);
  else return `nothing (${kind})`;
  return `${kind} ${kind === 'write' || kind === 'mkdir' || kind === 'outOfBandWrite' ? rel : (file ?? sub)?.path}`;
}

/** A walk of `dir` must give what listing it by hand gives now. */
async function expectCurrentWalk(fs: FileSystem, dir: string, after: string): Promise<void> {
  const top = await fs.resolve(dir);
  deepEqual((await walkAll(fs, top, 1000)).map(shape), (await listRecursively(fs, top, 1000)).map(shape), `a walk of ${dir} after ${after}`);
}

export const walkRules: Rule[] = [
  {
    id: 'D8',
    title: 'walk never lists a directory the caller pruned: one removed once given fails nothing, is reported to no onUnreadable, and nothing below it is given',
    async run(ctx) {
      const tree = ['keep/a.txt', 'gone/b.txt', 'gone/deeper/c.txt', 'keep/gone/d.txt', 'z.txt'];
      for (const reportUnreadable of [false, true]) {
        await ctx.example(`pruned directories removed during the walk${reportUnreadable ? ', with onUnreadable' : ''}`, () =>
          checkPrunedWalk(ctx, tree, new Set(['gone']), reportUnreadable),
        );
      }
      await ctx.check(
        'random trees, random pruned names',
        fc.asyncProperty(fc.array(relPathArb, { maxLength: 6 }), fc.subarray(['a', 'b', 'c', 'é']), fc.boolean(), async (paths, names, reportUnreadable) =>
          checkPrunedWalk(ctx, paths, new Set(names), reportUnreadable),
        ),
        0.25,
      );
    },
  },
  {
    id: 'D9',
    title: 'walk gives the tree as it is now: a walk after a change, through the contract or behind it, shows the change',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('a write, a rewrite, a removal and a new directory between two walks', async () => {
        const dir = `${ctx.dir()}/t`;
        await buildTree(fs, dir, ['a.txt', 'sub/b.txt']);
        await expectCurrentWalk(fs, dir, 'building the tree');
        await fs.writeText(await fs.resolve(`${dir}/sub/new.txt`), 'new\n');
        await fs.writeText(await fs.resolve(`${dir}/a.txt`), 'a longer content than before\n');
        await fs.remove(await fs.resolve(`${dir}/sub/b.txt`));
        await fs.mkdir(await fs.resolve(`${dir}/made`));
        await expectCurrentWalk(fs, dir, 'a write, a rewrite, a removal and an mkdir');
      });
      await ctx.check(
        'walks between random changes',
        fc.asyncProperty(fc.array(relPathArb, { minLength: 1, maxLength: 4 }), fc.array(changeArb, { minLength: 1, maxLength: 3 }), async (paths, changes) => {
          const dir = `${ctx.dir()}/t`;
          await buildTree(fs, dir, paths);
          await expectCurrentWalk(fs, dir, 'building the tree');
          const done: string[] = [];
          for (const c of changes) {
            done.push(await change(ctx, dir, c));
            await expectCurrentWalk(fs, dir, done.join(', '));
          }
        }),
        0.25,
      );
    },
  },
];
