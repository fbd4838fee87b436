import fc from 'fast-check';
import type { FsExpect, FsWriteIntent } from '../../seam/index.js';
import { distinctPairArb, textArb } from '../arbitraries.js';
import {
  bytesEqual,
  bytesOf,
  deepEqual,
  describeSettled,
  equal,
  expectUnchanged,
  interleave,
  ok,
  rejects,
  seedFile,
  utf8,
  type Rule,
} from '../harness.js';

/** G7 and F1: the provider's compare-and-swap, and writes with deferred durability. */
export const swapRules: Rule[] = [
  {
    id: 'G7',
    title: 'a swap whose expectation no longer holds changes nothing and reports the current state',
    skipIf: (subject) => (subject.provider === undefined ? 'the subject gives no provider to swap through' : undefined),
    async run(ctx) {
      const { fs } = ctx;
      const provider = ctx.subject.provider!;
      const expectArb = fc.constantFrom('current', 'stale', 'absent', 'any');
      await ctx.check(
        'every expectation against a present and an absent file',
        fc.asyncProperty(fc.boolean(), expectArb, fc.option(textArb, { nil: null }), textArb, async (present, kind, next, initial) => {
          const path = `${ctx.dir()}/f.txt`;
          const target = await fs.resolve(path);
          const before = present ? await fs.writeBytes(target, utf8(initial)) : undefined;
          const stale = (await fs.writeBytes(await fs.resolve(`${path}.other`), utf8(`${initial}!`))).version;
          const expect: FsExpect =
            kind === 'current'
              ? before ? { kind: 'present', version: before.version } : { kind: 'absent' }
              : kind === 'stale' ? { kind: 'present', version: stale } : { kind };
          const holds = kind === 'any' || kind === 'current' || (kind === 'absent' && !present);
          const bytes = next === null ? null : utf8(next);
          const result = await provider.swap(target, { expect, bytes });
          const label = `swap expecting ${JSON.stringify(expect)} on ${present ? 'a present' : 'an absent'} file`;
          if (!holds) {
            deepEqual(result, { ok: false, current: before ? { kind: 'present', version: before.version } : { kind: 'absent' } }, `${label}: the report`);
            await expectUnchanged(fs, target, { bytes: before && utf8(initial), ...(before ? { version: before.version } : {}) }, label);
            return;
          }
          ok(result.ok, `${label} must succeed, got ${JSON.stringify(result)}`);
          equal(result.existed, present, `${label}: existed`);
          const now = await bytesOf(fs, target);
          if (bytes === null) {
            ok(now === undefined, `${label} with bytes null must remove the file`);
            equal(result.version, undefined, `${label}: a removal has no version`);
            return;
          }
          ok(now !== undefined, `${label} must leave the new bytes`);
          bytesEqual(now, bytes, `${label}: content`);
          equal(result.version as string | undefined, (await fs.stat(target))?.version, `${label}: the version returned is what stat reports (V3)`);
        }),
        0.5,
      );
      await ctx.check(
        'swaps racing from one version have exactly one winner',
        fc.asyncProperty(fc.scheduler(), fc.array(fc.nat(2), { minLength: 2, maxLength: 5 }), async (s, groups) => {
          const { target, version } = await seedFile(fs, `${ctx.dir()}/f.txt`, 'base\n');
          const tasks = groups.map((_, i) => () => provider.swap(target, { expect: { kind: 'present', version }, bytes: utf8(`writer ${i}\n`) }));
          const results = await interleave(s, tasks, groups);
          const labels = groups.map((_, i) => `swap #${i}`);
          const summary = describeSettled(results, labels);
          const won = results.flatMap((r, i) => (r.status === 'fulfilled' && r.value.ok ? [i] : []));
          equal(won.length, 1, `exactly one swap must succeed (${summary}: ${JSON.stringify(results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected')))})`);
          bytesEqual((await bytesOf(fs, target))!, utf8(`writer ${won[0]}\n`), `the file must hold the winner's bytes (${summary})`);
        }),
        0.5,
      );
    },
  },
  {
    id: 'F1',
    title: "a write or removal with durability 'deferred' behaves as any other, and flush of its directories changes nothing",
    async run(ctx) {
      const { fs } = ctx;
      const deferred = { durability: 'deferred' } as const;
      await ctx.check(
        'deferred writes, guarded writes and removals, then a flush',
        fc.asyncProperty(distinctPairArb, fc.boolean(), async ([first, second], nested) => {
          const path = nested ? `${ctx.dir()}/new/deeper/f.txt` : `${ctx.dir()}/f.txt`;
          const target = await fs.resolve(path);
          const made = await fs.writeBytes(target, utf8(first), { kind: 'createIfAbsent' }, deferred);
          equal(made.operation, 'create', 'a deferred create');
          bytesEqual((await bytesOf(fs, target))!, utf8(first), 'a deferred write is visible at once');
          equal((await fs.stat(target))?.version, made.version, 'stat after a deferred write reports its version (V3)');
          const stale: FsWriteIntent = { kind: 'replaceIfVersion', version: made.version };
          const next = await fs.writeBytes(target, utf8(second), stale, deferred);
          await rejects(fs.remove(target, stale, deferred), 'FS_STALE_VERSION', 'a deferred remove with a superseded version');
          await expectUnchanged(fs, target, { bytes: utf8(second), version: next.version }, 'after a refused deferred remove');
          const parent = await fs.resolve(path.slice(0, path.lastIndexOf('/')));
          if (fs.flush) {
            await fs.flush([parent, await fs.resolve(`${ctx.dir()}/never-made`)]);
            await expectUnchanged(fs, target, { bytes: utf8(second), version: next.version }, 'after flush');
          }
          await fs.remove(target, { kind: 'replaceIfVersion', version: next.version }, deferred);
          ok((await bytesOf(fs, target)) === undefined, 'a deferred removal is visible at once');
          if (fs.flush) await fs.flush([parent]);
          ok((await bytesOf(fs, target)) === undefined, 'a flush brings nothing back');
        }),
        0.5,
      );
      if (fs.flush) {
        await rejects(fs.writeBytes(await fs.resolve(`${ctx.dir()}/x`), utf8('x'), undefined, { durability: 'later' as never }), 'FS_INVALID_ARGUMENT', 'an unknown durability');
      }
    },
  },
];
