import fc from 'fast-check';
import { FsVersion, type FileSystem, type FsChange, type FsErrorCode, type FsTarget } from '../../seam/index.js';
import { deepEqual, equal, fail, ok, rejects, utf8, type Rule, type RuleContext } from '../harness.js';

// B1: a batch of guarded changes (applyChanges) is all or nothing. Names are chosen so that none is
// the parent directory of another: every one is a file or absent.
const NAMES = ['a', 'b', 'c', 'd/e', 'd/f', 'g/h/i'] as const;

/** One change asked of the batch, before it is fitted to the tree. */
interface Action {
  readonly name: number;
  readonly kind: 'write' | 'remove' | 'move';
  readonly dest: number;
  readonly text: string;
}

/** A guard broken before the batch runs: another writer's change, or a wrong version in the guard. */
interface Break {
  readonly at: number;
  readonly how: 'concurrent' | 'wrongVersion';
}

const contentArb = fc.string({ maxLength: 8 }).map((s) => `ours:${s}`);

const caseArb: fc.Arbitrary<Case> = fc.record({
  tree: fc.array(fc.option(contentArb, { freq: 2 }), { minLength: NAMES.length, maxLength: NAMES.length }),
  actions: fc.array(
    fc.record({ name: fc.nat(NAMES.length - 1), kind: fc.constantFrom<Action['kind'][]>('write', 'remove', 'move'), dest: fc.nat(NAMES.length - 1), text: contentArb }),
    { minLength: 1, maxLength: 6 },
  ),
  breaks: fc.oneof(
    { weight: 1, arbitrary: fc.constant([] as Break[]) },
    { weight: 2, arbitrary: fc.array(fc.record({ at: fc.nat(5), how: fc.constantFrom<Break['how'][]>('concurrent', 'wrongVersion') }), { minLength: 1, maxLength: 2 }) },
  ),
});

type Tree = Map<string, string>;

const sorted = (entries: [string, string][]) => Object.fromEntries(entries.sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));

/**
 * Every file of the run's directory (a name → its text). Only NAMES ever hold files there, so
 * reading each is the whole tree, without relying on listings or walks (rules of their own).
 */
async function snapshot(fs: FileSystem, dir: string): Promise<Record<string, string>> {
  const out: [string, string][] = [];
  for (const name of NAMES) {
    const target = await fs.resolve(`${dir}/${name}`);
    const info = await fs.stat(target);
    if (info === undefined) continue;
    ok(info.type === 'file', `"${name}" is a file or absent`);
    out.push([name, Buffer.from((await fs.readBytes(target, { maxBytes: 1 << 20 })).bytes).toString('utf8')]);
  }
  return sorted(out);
}

/** The actions fitted to the tree: distinct targets, each guard naming what is there. */
async function plan(fs: FileSystem, dir: string, tree: Tree, actions: readonly Action[]) {
  const claimed = new Set<string>();
  const changes: FsChange[] = [];
  /** What each change's guard protects: the name another writer changes to break it, and whether it expects nothing there. */
  const guarded: { name: string; create: boolean; move: boolean }[] = [];
  const expected = new Map(tree);
  const target = (name: string) => fs.resolve(`${dir}/${name}`);
  const version = async (name: string) => (await fs.stat(await target(name)))!.version;
  for (const a of actions) {
    const name = NAMES[a.name]!;
    if (claimed.has(name)) continue;
    const present = tree.has(name);
    if (a.kind === 'move' && present) {
      const dest = NAMES[a.dest]!;
      if (dest === name || claimed.has(dest)) continue;
      claimed.add(name).add(dest);
      const replace = tree.has(dest) ? await version(dest) : false;
      changes.push({ kind: 'move', from: await target(name), to: await target(dest), expect: await version(name), replace, bytes: utf8(a.text) });
      guarded.push({ name, create: false, move: true });
      expected.delete(name);
      expected.set(dest, a.text);
      continue;
    }
    claimed.add(name);
    if (a.kind === 'remove' && present) {
      changes.push({ kind: 'remove', target: await target(name), version: await version(name) });
      expected.delete(name);
    } else {
      const intent = present ? ({ kind: 'replaceIfVersion', version: await version(name) } as const) : ({ kind: 'createIfAbsent' } as const);
      changes.push({ kind: 'write', target: await target(name), bytes: utf8(a.text), intent });
      expected.set(name, a.text);
    }
    guarded.push({ name, create: !present, move: false });
  }
  return { changes, guarded, expected };
}

/** Breaks the guard of change `i`; returns the code its failure must have. */
async function breakGuard(ctx: RuleContext, dir: string, changes: FsChange[], guarded: { name: string; create: boolean; move: boolean }, i: number, how: Break['how'], n: number): Promise<FsErrorCode> {
  const c = changes[i]!;
  if (how === 'wrongVersion' && !guarded.create) {
    const wrong = FsVersion(`not-a-version-${n}`);
    changes[i] = c.kind === 'move' ? { ...c, expect: wrong } : c.kind === 'remove' ? { ...c, version: wrong } : { ...c, intent: { kind: 'replaceIfVersion', version: wrong } };
    return 'FS_STALE_VERSION';
  }
  // Another writer (a seam of its own, as another process) changes or creates the file meanwhile.
  const other = ctx.concurrentFs;
  await other.writeBytes(await other.resolve(`${dir}/${guarded.name}`), utf8(`theirs:${n}`));
  return guarded.create ? 'FS_NOT_OBSERVED' : 'FS_STALE_VERSION';
}

interface Case {
  readonly tree: readonly (string | null)[];
  readonly actions: readonly Action[];
  readonly breaks: readonly Break[];
}

async function batchCase(ctx: RuleContext, input: Case): Promise<void> {
  const { fs } = ctx;
  const dirPath = ctx.dir();
  await fs.mkdir(await fs.resolve(dirPath));
  const tree: Tree = new Map();
  for (const [i, text] of input.tree.entries()) {
    if (text === null) continue;
    tree.set(NAMES[i]!, text);
    await fs.writeBytes(await fs.resolve(`${dirPath}/${NAMES[i]}`), utf8(text));
  }
  const { changes, guarded, expected } = await plan(fs, dirPath, tree, input.actions);
  // The guards to break, by position in the batch; the first decides the error.
  const broken = changes.length === 0 ? [] : [...new Set(input.breaks.map((b) => b.at % changes.length))].sort((x, y) => x - y);
  const codes = new Map<number, FsErrorCode>();
  for (const [n, at] of broken.entries()) codes.set(at, await breakGuard(ctx, dirPath, changes, guarded[at]!, at, input.breaks[n]!.how, n));
  const before = await snapshot(fs, dirPath);
  if (broken.length === 0) {
    const { versions } = await fs.applyChanges!(changes);
    equal(versions.length, changes.length, 'one version per change');
    for (const [i, c] of changes.entries()) {
      const at = c.kind === 'move' ? c.to : c.kind === 'write' ? c.target : undefined;
      if (at === undefined) equal(versions[i], undefined, `change ${i + 1} (a removal) has no version`);
      else equal(versions[i], (await fs.stat(at))?.version, `change ${i + 1}'s version is the file's`);
    }
    deepEqual(await snapshot(fs, dirPath), sorted([...expected]), 'every change made, as the model has it');
    return;
  }
  const first = broken[0]!;
  const err = await rejects(fs.applyChanges!(changes), codes.get(first)!, `a batch whose change ${first + 1} of ${changes.length} has a broken guard`);
  const named = changes[first]!.kind === 'move' ? (changes[first] as { from: FsTarget }).from : (changes[first] as { target: FsTarget }).target;
  ok(err.message.includes(`"${named.displayPath}"`), `the error names the first failing change "${named.displayPath}": ${err.message}`);
  deepEqual(await snapshot(fs, dirPath), before, 'nothing changed anywhere');
}

export const batchRules: Rule[] = [
  {
    id: 'B1',
    title: 'applyChanges is all or nothing: when every guard holds every change is made; when one fails (a wrong version, or another writer meanwhile) no file changes and the error names the first failing change',
    skipIf: (subject) => (typeof subject.fs.applyChanges === 'function' ? undefined : 'the filesystem has no applyChanges'),
    async run(ctx) {
      await ctx.check('random batches on random trees, with and without broken guards', fc.asyncProperty(caseArb, (input) => batchCase(ctx, input)), 0.5);
      await ctx.example('another writer changes the last file first: the batch changes nothing', async () => {
        await batchCase(ctx, {
          tree: ['ours:a', 'ours:b', 'ours:c', null, null, null],
          actions: [
            { name: 3, kind: 'write', dest: 0, text: 'ours:new' },
            { name: 0, kind: 'write', dest: 0, text: 'ours:A' },
            { name: 1, kind: 'move', dest: 5, text: 'ours:moved' },
            { name: 2, kind: 'remove', dest: 0, text: '' },
          ],
          breaks: [{ at: 3, how: 'concurrent' }],
        });
      });
      await ctx.example('an empty batch, and a file changed twice', async () => {
        const { fs } = ctx;
        deepEqual((await fs.applyChanges!([])).versions, [], 'an empty batch');
        const t = await fs.resolve(`${ctx.dir()}/twice`);
        const write: FsChange = { kind: 'write', target: t, bytes: utf8('x'), intent: { kind: 'createIfAbsent' } };
        await rejects(fs.applyChanges!([write, write]), 'FS_INVALID_ARGUMENT', 'one file changed twice');
        if ((await fs.stat(t)) !== undefined) fail('a refused batch created its file');
      });
    },
  },
];
