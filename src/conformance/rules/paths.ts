import { posix } from 'node:path';
import fc from 'fast-check';
import type { FileSystem, FsTarget } from '../../seam/index.js';
import {
  aliasesOf,
  bytesEqual,
  describeError,
  equal,
  expectUnchanged,
  fail,
  isFsErrorLike,
  notEqual,
  ok,
  rejects,
  seedFile,
  settle,
  show,
  utf8,
  type Rule,
  type RuleContext,
} from '../harness.js';

const segmentArb = fc.constantFrom('a', 'b', '..', '.', '', '~', '%2e%2e', '%2F', 'x y', 'é', '😀');

export const pathRules: Rule[] = [
  {
    id: 'P1',
    title: 'paths are canonicalised by the seam',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('empty, NUL and non-string paths', async () => {
        await rejects(fs.resolve(''), 'FS_INVALID_ARGUMENT', 'resolve("")');
        await rejects(fs.resolve(`${ctx.subject.base}/a\0b`), 'FS_INVALID_ARGUMENT', 'resolve of a path with a NUL byte');
        await rejects(fs.resolve('\0'), 'FS_INVALID_ARGUMENT', 'resolve("\\0")');
        for (const bad of [undefined, null, 42, {}, ['a'], new String('/a')]) {
          await rejects(fs.resolve(bad as unknown as string), 'FS_INVALID_ARGUMENT', `resolve(${show(bad)})`);
        }
      });
      await ctx.example('targets not made by resolve are refused', async () => {
        const { target, bytes, version } = await seedFile(fs, `${ctx.dir()}/f.txt`, 'kept');
        for (const bad of [undefined, null, {}, { targetKey: '', displayPath: '/x' }, '/x']) {
          await rejects(fs.stat(bad as unknown as FsTarget), 'FS_INVALID_ARGUMENT', `stat(${show(bad)})`);
          await rejects(fs.writeText(bad as unknown as FsTarget, 'x'), 'FS_INVALID_ARGUMENT', `writeText(${show(bad)})`);
        }
        await rejects(fs.writeText(target, 42 as unknown as string), 'FS_INVALID_ARGUMENT', 'writeText with non-string content');
        await rejects(fs.writeText(target, 'a\0b'), 'FS_INVALID_ARGUMENT', 'writeText with a NUL character');
        await expectUnchanged(fs, target, { bytes, version }, 'after refused writes');
      });
      await ctx.example('no ~ expansion and no URL decoding', async () => {
        const dir = ctx.dir();
        const tilde = await fs.resolve('~/x', { cwd: dir });
        equal(tilde.targetKey as string, (await fs.resolve(`${dir}/~/x`)).targetKey, '"~/x" is a relative path');
        const encoded = await fs.resolve('%2e%2e/x', { cwd: dir });
        equal(encoded.targetKey as string, (await fs.resolve(`${dir}/%2e%2e/x`)).targetKey, '"%2e%2e/x" is a literal name');
        notEqual(encoded.targetKey as string, (await fs.resolve(`${posix.dirname(dir)}/x`)).targetKey, '"%2e%2e" is not ".."');
        const { target } = await seedFile(fs, `${dir}/%41.txt`, 'percent');
        equal((await fs.stat(await fs.resolve(`${dir}/A.txt`))), undefined, '"%41.txt" is not "A.txt"');
        equal((await fs.readText(target)).text, 'percent', 'a file named "%41.txt" reads back');
      });
      await ctx.check(
        'relative paths resolve against cwd',
        fc.asyncProperty(fc.array(segmentArb, { minLength: 1, maxLength: 6 }), fc.boolean(), async (segments, useOption) => {
          const rel = segments.join('/');
          fc.pre(rel !== '' && !rel.startsWith('/'));
          const dir = useOption ? ctx.dir() : fs.cwd;
          const expected = posix.resolve(dir, rel);
          const viaCwd = await settle(useOption ? fs.resolve(rel, { cwd: dir }) : fs.resolve(rel), `resolve(${JSON.stringify(rel)})`);
          const viaAbs = await settle(fs.resolve(expected), `resolve(${JSON.stringify(expected)})`);
          const what = `${JSON.stringify(rel)} from ${dir} (expected ${expected})`;
          if (!viaAbs.ok) {
            ok(!viaCwd.ok, `${what}: the absolute path is refused (${viaAbs.error.code}) but the relative one resolved`);
            equal(viaCwd.error.code, viaAbs.error.code, `${what}: error code`);
            return;
          }
          ok(viaCwd.ok, `${what}: ${viaCwd.ok ? '' : `${viaCwd.error.code}: ${viaCwd.error.message}`}`);
          equal(viaCwd.value.targetKey as string, viaAbs.value.targetKey, `${what}: targetKey`);
          equal(viaCwd.value.displayPath, expected, `${what}: displayPath`);
        }),
        0.5,
      );
    },
  },
  {
    id: 'P2',
    title: 'paths outside the root are refused',
    skipIf: (s) => (s.fs.root === undefined ? 'the filesystem has no root' : s.fs.root === '/' ? 'the root is /' : undefined),
    async run(ctx) {
      const { fs } = ctx;
      const root = fs.root!;
      const parent = posix.dirname(root);
      await ctx.example('lexical escapes', async () => {
        const cases: [string, Promise<FsTarget>][] = [
          [`${root}/../outside.txt`, fs.resolve(`${root}/../outside.txt`)],
          ['../outside.txt from the root', fs.resolve('../outside.txt', { cwd: root })],
          [`${ctx.subject.base}/${'../'.repeat(root.split('/').length + 2)}etc/passwd`, fs.resolve(`${ctx.subject.base}/${'../'.repeat(root.split('/').length + 2)}etc/passwd`)],
          [`${parent}/elsewhere.txt`, fs.resolve(`${parent}/elsewhere.txt`)],
          ['/', fs.resolve('/')],
          [`${root}-evil/x.txt`, fs.resolve(`${root}-evil/x.txt`)],
          [`${root}-evil`, fs.resolve(`${root}-evil`)],
          ['a cwd outside the root', fs.resolve('x.txt', { cwd: `${root}-evil` })],
        ];
        for (const [what, promise] of cases) await rejects(promise, 'FS_OUTSIDE_ROOT', `resolve ${what}`);
      });
      const symlink = ctx.subject.setup?.symlink;
      if (!ctx.subject.capabilities?.symlinks || !symlink) return;
      const link = (target: string, path: string) => symlink.call(ctx.subject.setup, target, path);
      const oob = ctx.subject.outOfBand;
      const outside = ctx.subject.outsideDir ?? `${root}-outside-${Date.now().toString(36)}`;
      const secret = `${outside}/secret.txt`;
      const secretBytes = utf8('outside the root\n');
      if (ctx.subject.outsideDir && oob) await oob.writeBytes(secret, secretBytes);
      const outsideIntact = async (what: string) => {
        if (!oob?.readBytes || !ctx.subject.outsideDir) return;
        const now = await oob.readBytes(secret);
        ok(now !== undefined, `${what}: the file outside the root was removed`);
        bytesEqual(now, secretBytes, `${what}: the file outside the root was changed`);
        equal(await oob.readBytes(`${outside}/new.txt`), undefined, `${what}: a file was created outside the root`);
      };
      await ctx.example('symlinks that leave the root', async () => {
        const dir = ctx.dir();
        await seedFile(fs, `${dir}/inside.txt`, 'inside\n');
        await link(secret, `${dir}/file-link`);
        await link(outside, `${dir}/dir-link`);
        await link(`${outside}/new.txt`, `${dir}/dangling-link`);
        await link('file-link', `${dir}/chained-link`);
        await link(posix.relative(dir, secret), `${dir}/relative-link`);
        for (const path of [
          `${dir}/file-link`,
          `${dir}/dir-link/secret.txt`,
          `${dir}/dir-link/new.txt`,
          `${dir}/dangling-link`,
          `${dir}/chained-link`,
          `${dir}/relative-link`,
        ]) {
          await refusesEverything(ctx, path);
          await outsideIntact(path);
        }
      });
      await ctx.example('symlinks inside the root are followed, and writes keep the link', async () => {
        const dir = ctx.dir();
        const real = await seedFile(fs, `${dir}/real.txt`, 'real\n');
        await link('real.txt', `${dir}/link.txt`);
        const via = await fs.resolve(`${dir}/link.txt`);
        equal(via.targetKey as string, real.target.targetKey, 'a link inside the root resolves to its target');
        equal((await fs.readText(via)).text, 'real\n', 'read through a link');
        await fs.writeText(via, 'through the link\n');
        equal((await fs.readText(real.target)).text, 'through the link\n', 'a write through a link lands in the target');
        equal((await fs.resolve(`${dir}/link.txt`)).targetKey as string, real.target.targetKey, 'the link is kept after a write through it');
        // An absolute link is no escape when it stays inside.
        await link(`${dir}/real.txt`, `${dir}/absolute.txt`);
        equal((await fs.readText(await fs.resolve(`${dir}/absolute.txt`))).text, 'through the link\n', 'read through an absolute link inside the root');
      });
      if (oob) {
        await ctx.example('a file swapped for an escaping link after resolve', async () => {
          const dir = ctx.dir();
          const { target } = await seedFile(fs, `${dir}/swapped.txt`, 'before the swap\n');
          await oob.remove(`${dir}/swapped.txt`);
          await link(secret, `${dir}/swapped.txt`);
          // Removing the link itself stays inside the root, so remove is not among these.
          for (const [what, op] of operations(fs, target).filter(([w]) => w !== 'remove')) {
            await rejects(op(), 'FS_OUTSIDE_ROOT', `${what} of a target whose file was swapped for a link out of the root`);
          }
          await outsideIntact('after the swap');
        });
      }
    },
  },
  {
    id: 'P3',
    title: 'aliases of one file share one target and version',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'lexical and symlink aliases',
        fc.asyncProperty(fc.nat(), fc.nat(), fc.nat(), async (a, b, c) => {
          const dir = ctx.dir();
          const { target: canonical } = await seedFile(fs, `${dir}/f.txt`, 'first\n');
          const aliases = await aliasesOf(ctx, dir, 'f.txt');
          for (const alias of aliases) {
            equal(alias.target.targetKey as string, canonical.targetKey, `targetKey of ${alias.label}`);
          }
          const [x, y, z] = [aliases[a % aliases.length]!, aliases[b % aliases.length]!, aliases[c % aliases.length]!];
          const written = await fs.writeText(x.target, `via ${x.label}\n`);
          equal((await fs.stat(y.target))?.version as string | undefined, written.version, `stat via ${y.label} after a write via ${x.label}`);
          const observed = await fs.readText(y.target);
          const guarded = await fs.writeText(z.target, 'guarded\n', { kind: 'replaceIfVersion', version: observed.version });
          equal((await fs.readText(x.target)).version as string, guarded.version, `a version read via ${y.label} guards a write via ${z.label}`);
          const entries = await fs.listDir(await fs.resolve(dir));
          for (const entry of entries) {
            if (entry.type === 'file') equal(entry.target.targetKey as string, canonical.targetKey, `listDir target of ${entry.name}`);
          }
          ok(fs.contains(await fs.resolve(dir), y.target), `contains(${dir}, ${y.label})`);
        }),
        0.25,
      );
    },
  },
];

function operations(fs: FileSystem, target: FsTarget): [string, () => Promise<unknown>][] {
  return [
    ['readText', () => fs.readText(target)],
    ['readBytes', () => fs.readBytes(target, { maxBytes: 1 << 20 })],
    ['writeText', () => fs.writeText(target, 'escaped\n')],
    ['writeBytes', () => fs.writeBytes(target, utf8('escaped\n'))],
    ['editText', () => fs.editText(target, { oldString: 'outside', newString: 'escaped' })],
    ['remove', () => fs.remove(target)],
  ];
}

/** The path is refused at resolve, or every operation on its target is refused with FS_OUTSIDE_ROOT. */
async function refusesEverything(ctx: RuleContext, path: string): Promise<void> {
  const { fs } = ctx;
  let target: FsTarget;
  try {
    target = await fs.resolve(path);
  } catch (err) {
    if (isFsErrorLike(err) && err.code === 'FS_OUTSIDE_ROOT') return;
    fail(`resolve ${path}: expected FS_OUTSIDE_ROOT, got ${describeError(err)}`);
  }
  for (const [what, op] of [['stat', () => fs.stat(target)] as [string, () => Promise<unknown>], ...operations(fs, target)]) {
    await rejects(op(), 'FS_OUTSIDE_ROOT', `${what} of ${path}, which resolved to ${target.targetKey}`);
  }
}
