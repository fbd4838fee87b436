import fc from 'fast-check';
import type { FileSystem, FsTarget, FsWriteIntent, FsWriteOutcome } from '../../seam/index.js';
import {
  bytesEqual,
  bytesOf,
  describeError,
  equal,
  interleave,
  isFsErrorLike,
  ok,
  seedFile,
  settle,
  showBytes,
  utf8,
  type Rule,
  type RuleContext,
} from '../harness.js';
import { listRecursively } from './dirs.js';
import { SPREAD, after } from './moments.js';

/**
 * Callers per fixed race: all start in one tick, so a provider that decides anything before its
 * atomic step (and awaits before acting) has every one of them decide on the same state.
 */
const RACERS = 6;

const CREATE_KINDS = ['createIfAbsent text', 'createIfAbsent bytes', 'unguarded text', 'unguarded bytes'] as const;
type CreateKind = (typeof CREATE_KINDS)[number];

const guarded = (kind: CreateKind) => kind.startsWith('createIfAbsent');

function create(fs: FileSystem, target: FsTarget, kind: CreateKind, content: string): Promise<FsWriteOutcome> {
  const intent: FsWriteIntent | undefined = guarded(kind) ? { kind: 'createIfAbsent' } : undefined;
  return kind.endsWith('bytes') ? fs.writeBytes(target, utf8(content), intent) : fs.writeText(target, content, intent);
}

function summarise(results: readonly PromiseSettledResult<unknown>[], labels: readonly string[]): string {
  return results
    .map((r, i) => {
      const op = r.status === 'fulfilled' ? (r.value as { operation?: string } | undefined)?.operation : undefined;
      return `${labels[i]}: ${r.status === 'fulfilled' ? `ok${op ? ` (${op})` : ''}` : describeError(r.reason)}`;
    })
    .join('; ');
}

const failedWith = (r: PromiseSettledResult<unknown>, code: string) => r.status === 'rejected' && isFsErrorLike(r.reason) && r.reason.code === code;

/**
 * G8: what every linear order of creators of one new file gives. The first to publish creates it
 * and alone says so; a later createIfAbsent is refused, a later unguarded write is an update; the
 * file holds the last writer's bytes, so after two or more writes, not the creator's.
 */
async function checkCreators(fs: FileSystem, target: FsTarget, kinds: readonly CreateKind[], results: PromiseSettledResult<FsWriteOutcome>[]) {
  const labels = kinds.map((k, i) => `${k} #${i}`);
  const summary = summarise(results, labels);
  const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
  const creators = won.filter((i) => (results[i] as PromiseFulfilledResult<FsWriteOutcome>).value.operation === 'create');
  equal(creators.length, 1, `callers that report they created the new file (operation 'create', i.e. the swap said existed: false) (${summary})`);
  results.forEach((r, i) => {
    if (i === creators[0]) return;
    if (guarded(kinds[i]!)) ok(failedWith(r, 'FS_NOT_OBSERVED'), `${labels[i]} lost to ${labels[creators[0]!]} and must get FS_NOT_OBSERVED (${summary})`);
    else ok(r.status === 'fulfilled', `${labels[i]} is unguarded and must succeed (${summary})`);
  });
  const now = await bytesOf(fs, target);
  ok(now !== undefined, `the file is absent after the creators ran (${summary})`);
  const last = won.find((i) => Buffer.from(now).equals(Buffer.from(utf8(contentOf(i)))));
  ok(last !== undefined, `the file holds ${showBytes(now)}, which no successful caller wrote (${summary})`);
  if (won.length > 1) {
    ok(last !== creators[0], `the file still holds the creator's bytes, though ${won.length - 1} other write(s) succeeded after it: one replaced the file while told it created it (${summary})`);
  }
  const info = await fs.stat(target);
  equal(info?.version as string | undefined, (results[last] as PromiseFulfilledResult<FsWriteOutcome>).value.version, `stat after the race: the version ${labels[last]} returned`);
}

const contentOf = (i: number) => `creator ${i}\n`;

async function raceCreators(fs: FileSystem, target: FsTarget, kinds: readonly CreateKind[]) {
  const results = await Promise.allSettled(kinds.map((kind, i) => create(fs, target, kind, contentOf(i))));
  await checkCreators(fs, target, kinds, results);
}

const g8: Rule = {
  id: 'G8',
  title: 'concurrent creators of one new file: exactly one is told it created it, and the file agrees',
  async run(ctx) {
    const fs = ctx.concurrentFs;
    const all = (kind: CreateKind) => Array.from({ length: RACERS }, () => kind);
    await ctx.example('createIfAbsent from many callers at once', async () => {
      await raceCreators(fs, await fs.resolve(`${ctx.dir()}/f.txt`), all('createIfAbsent bytes'));
      await raceCreators(fs, await fs.resolve(`${ctx.dir()}/f.txt`), all('createIfAbsent text'));
    });
    await ctx.example('unguarded writes of a new file from many callers at once', async () => {
      await raceCreators(fs, await fs.resolve(`${ctx.dir()}/f.txt`), all('unguarded bytes'));
      await raceCreators(fs, await fs.resolve(`${ctx.dir()}/f.txt`), all('unguarded text'));
      await raceCreators(fs, await fs.resolve(`${ctx.dir()}/new/deeper/f.txt`), CREATE_KINDS.flatMap((k) => [k, k]).slice(0, RACERS));
    });
    await ctx.example('unguarded removes of one file from many callers at once', async () => {
      const { target } = await seedFile(fs, `${ctx.dir()}/f.txt`, 'doomed\n');
      const results = await Promise.allSettled(Array.from({ length: RACERS }, () => fs.remove(target)));
      const summary = summarise(results, results.map((_, i) => `remove #${i}`));
      equal(results.filter((r) => r.status === 'fulfilled').length, 1, `removes that succeed: the one that found the file (the swap said existed: true) (${summary})`);
      ok(results.every((r) => r.status === 'fulfilled' || failedWith(r, 'FS_NOT_FOUND')), `the other removes must get FS_NOT_FOUND (${summary})`);
      equal(await bytesOf(fs, target), undefined, 'the file after the removes');
    });
    await ctx.check(
      'creators interleaved',
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.record({ kind: fc.constantFrom(...CREATE_KINDS), group: fc.nat(2) }), { minLength: 2, maxLength: 5 }),
        async (s, ops) => {
          const target = await fs.resolve(`${ctx.dir()}/f.txt`);
          const kinds = ops.map((o) => o.kind);
          const results = await interleave(s, kinds.map((kind, i) => () => create(fs, target, kind, contentOf(i))), ops.map((o) => o.group));
          await checkCreators(fs, target, kinds, results);
        },
      ),
      0.25,
    );
  },
};

/**
 * R1: one no-replace rename of a file onto `to`, racing creators of `to`. In any linear order the
 * first to reach `to` makes it: after that the rename gets FS_ALREADY_EXISTS and a createIfAbsent
 * FS_NOT_OBSERVED, and only an unguarded write may still replace it. So the source's bytes are at
 * `to` only when no creator succeeded: a created file is never destroyed.
 */
async function raceRename(
  ctx: RuleContext,
  tasks: { creators: readonly CreateKind[]; groups?: readonly number[]; renameFirst: boolean; s?: fc.Scheduler; startAt?: number },
) {
  const fs = ctx.concurrentFs;
  const dir = ctx.dir();
  const source = await seedFile(fs, `${dir}/from.txt`, 'moved by the rename\n');
  const to = await fs.resolve(`${dir}/to.txt`);
  const rename = () => fs.rename(source.target, to);
  const startAt = tasks.startAt ?? 0;
  const creates = tasks.creators.map((kind, i) => () => after(startAt).then(() => create(fs, to, kind, contentOf(i))));
  const all: (() => Promise<unknown>)[] = tasks.renameFirst ? [rename, ...creates] : [...creates, rename];
  const results = tasks.s
    ? await interleave(tasks.s, all, tasks.groups!)
    : await Promise.allSettled(all.map((task) => task()));
  const renameAt = tasks.renameFirst ? 0 : creates.length;
  const moved = results[renameAt]!;
  const made = results.filter((_, i) => i !== renameAt);
  const creatorAt = (i: number) => i - (tasks.renameFirst ? 1 : 0);
  const labels = all.map((_, i) => (i === renameAt ? 'rename (replace: false)' : `${tasks.creators[creatorAt(i)]} #${creatorAt(i)}`));
  const summary = summarise(results, labels);
  ok(moved.status === 'fulfilled' || failedWith(moved, 'FS_ALREADY_EXISTS'), `the rename must succeed or get FS_ALREADY_EXISTS (${summary})`);
  made.forEach((r, i) => {
    const kind = tasks.creators[i]!;
    ok(r.status === 'fulfilled' || (guarded(kind) && failedWith(r, 'FS_NOT_OBSERVED')), `${kind} #${i} must succeed${guarded(kind) ? ' or get FS_NOT_OBSERVED' : ''} (${summary})`);
  });
  const renamed = moved.status === 'fulfilled';
  const claims = (renamed ? 1 : 0) + made.filter((r, i) => guarded(tasks.creators[i]!) && r.status === 'fulfilled').length;
  ok(claims <= 1, `the destination was made ${claims} times: the rename and a createIfAbsent both found it absent (${summary})`);
  const wrote = made.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
  const now = await bytesOf(fs, to);
  ok(now !== undefined, `the destination is absent after the race (${summary})`);
  const sourceNow = await bytesOf(fs, source.target);
  if (renamed) ok(sourceNow === undefined, `the rename succeeded, but the source is still there (${summary})`);
  else bytesEqual(sourceNow ?? new Uint8Array(), source.bytes, `the refused rename must leave the source as it was (${summary})`);
  if (Buffer.from(now).equals(Buffer.from(source.bytes))) {
    ok(renamed, `the destination holds the source's bytes, yet the rename was refused (${summary})`);
    equal(wrote.length, 0, `the destination holds the moved file, so the file that ${wrote.map((i) => `${tasks.creators[i]} #${i}`).join(', ')} created there was destroyed by a rename that may not replace (${summary})`);
    return;
  }
  ok(wrote.some((i) => Buffer.from(now).equals(Buffer.from(utf8(contentOf(i))))), `the destination holds ${showBytes(now)}, which neither the rename nor a successful creator put there (${summary})`);
}

const r1: Rule = {
  id: 'R1',
  title: 'a rename that may not replace never destroys a file created at its destination meanwhile',
  async run(ctx) {
    await ctx.example('a rename and a create of its destination, started together', async () => {
      for (const renameFirst of [true, false]) {
        for (const kind of CREATE_KINDS) await raceRename(ctx, { creators: [kind], renameFirst });
        await raceRename(ctx, { creators: CREATE_KINDS.slice(0, RACERS - 1), renameFirst });
      }
    });
    await ctx.example('a create of its destination starting at spread moments after the rename', async () => {
      for (const startAt of SPREAD) for (const kind of CREATE_KINDS) await raceRename(ctx, { creators: [kind], renameFirst: true, startAt });
    });
    await ctx.check(
      'a rename and creates interleaved',
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.record({ kind: fc.constantFrom(...CREATE_KINDS), group: fc.nat(2) }), { minLength: 1, maxLength: 3 }),
        fc.nat(2),
        async (s, ops, renameGroup) => {
          await raceRename(ctx, { creators: ops.map((o) => o.kind), groups: [renameGroup, ...ops.map((o) => o.group)], renameFirst: true, s });
        },
      ),
      0.25,
    );
  },
};

/** R2's layout: `real/` with two files, and `link` -> `real`. */
async function linkedDirectory(ctx: RuleContext) {
  const { fs } = ctx;
  const dir = ctx.dir();
  const moving = await seedFile(fs, `${dir}/real/f.txt`, 'the file that moves\n');
  const staying = await seedFile(fs, `${dir}/real/keep.txt`, 'the file that stays\n');
  await ctx.subject.setup!.symlink!.call(ctx.subject.setup, 'real', `${dir}/link`);
  return { dir, moving, staying };
}

/** Everything under `dir` as `type path` lines, in tree order. */
async function tree(fs: FileSystem, dir: string): Promise<string> {
  return (await listRecursively(fs, await fs.resolve(dir), 100)).map((e) => `${e.type} ${e.path}`).join(', ');
}

/** The entries of `dir` itself as `type name`. */
async function entries(fs: FileSystem, dir: string): Promise<string> {
  return (await fs.listDir(await fs.resolve(dir))).map((e) => `${e.type} ${e.name}`).join(', ');
}

const r2: Rule = {
  id: 'R2',
  title: 'a rename through a symlinked directory moves the file the link leads to, and nothing else',
  skipIf: (subject) =>
    subject.capabilities?.symlinks && subject.setup?.symlink ? undefined : 'the subject cannot create symlinks (capabilities.symlinks with setup.symlink)',
  async run(ctx) {
    const { fs } = ctx;
    await ctx.example('files moved into, out of and within a linked directory', async () => {
      for (const [fromVia, toVia] of [['link', 'link'], ['link', 'real'], ['real', 'link']] as const) {
        for (const name of ['g.txt', 'sub/g.txt']) {
          const { dir, moving, staying } = await linkedDirectory(ctx);
          const what = `rename ${fromVia}/f.txt to ${toVia}/${name} (link -> real)`;
          const moved = await settle(fs.rename(await fs.resolve(`${dir}/${fromVia}/f.txt`), await fs.resolve(`${dir}/${toVia}/${name}`)), what);
          ok(moved.ok, `${what} must succeed, got ${moved.ok ? '' : `${moved.error.code}: ${moved.error.message}`}`);
          equal(await fs.stat(moving.target), undefined, `${what}: the file at the source's real path`);
          bytesEqual((await bytesOf(fs, await fs.resolve(`${dir}/real/${name}`))) ?? new Uint8Array(), moving.bytes, `${what}: the file at the destination's real path`);
          bytesEqual((await bytesOf(fs, staying.target)) ?? new Uint8Array(), staying.bytes, `${what}: the other file in the directory`);
          const inside = name === 'g.txt' ? ['file g.txt', 'file keep.txt'] : ['file keep.txt', 'directory sub', 'file sub/g.txt'];
          equal(await tree(fs, `${dir}/real`), inside.join(', '), `${what}: what the real directory holds`);
          equal(await entries(fs, dir), 'directory link, directory real', `${what}: the link and the directory, and no stray entry beside them`);
          equal((await fs.resolve(`${dir}/link`)).targetKey as string, (await fs.resolve(`${dir}/real`)).targetKey, `${what}: the link still leads to the directory`);
        }
      }
    });
    await ctx.example('guarded and replacing renames, and a directory, through the link', async () => {
      const { dir, moving, staying } = await linkedDirectory(ctx);
      const via = (p: string) => fs.resolve(`${dir}/link/${p}`);
      await fs.rename(await via('f.txt'), await via('keep.txt'), { expect: moving.version, replace: staying.version });
      equal(await fs.stat(moving.target), undefined, 'after a replacing rename through the link: the source');
      bytesEqual((await bytesOf(fs, staying.target)) ?? new Uint8Array(), moving.bytes, 'after a replacing rename through the link: the replaced file');
      await fs.writeText(await fs.resolve(`${dir}/real/d/inner.txt`), 'inner\n');
      await fs.rename(await via('d'), await via('e'));
      equal(await tree(fs, `${dir}/real`), 'directory e, file e/inner.txt, file keep.txt', 'after moving a directory through the link: the real directory');
      equal(await entries(fs, dir), 'directory link, directory real', 'after moving a directory through the link: no stray entry');
    });
  },
};

/** G8, which belongs with the other guard rules. */
export const createRaceRules: Rule[] = [g8];
/** R1 and R2: renames that race a creator, and renames through a linked directory. */
export const renameRules: Rule[] = [r1, r2];
