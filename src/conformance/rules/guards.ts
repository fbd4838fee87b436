import fc from 'fast-check';
import { applyEdit, encodeText, textForWrite, type FsVersion, type FsWriteIntent } from '../../seam/index.js';
import { distinctPairArb, textArb } from '../arbitraries.js';
import {
  aliasesOf,
  bytesEqual,
  bytesOf,
  describeSettled,
  equal,
  expectUnchanged,
  fail,
  interleave,
  isFsErrorLike,
  ok,
  rejects,
  seedFile,
  showBytes,
  utf8,
  type Rule,
} from '../harness.js';
import { atomicityRules } from './atomicity.js';
import { swapRules } from './swap.js';

/** G1-G4: what a version guard or createIfAbsent refuses, and that a refusal writes nothing. */
const writeGuardRules: Rule[] = [
  {
    id: 'G1',
    title: 'a stale replaceIfVersion is refused and writes nothing',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'every mutation with a superseded version',
        fc.asyncProperty(distinctPairArb, textArb, async ([first, second], third) => {
          const { target, version: old } = await seedFile(fs, `${ctx.dir()}/f.txt`, `${first}\n@token@\n`);
          const now = await fs.writeBytes(target, utf8(`${second}\n@token@\n`));
          const state = { bytes: utf8(`${second}\n@token@\n`), version: now.version };
          const stale: FsWriteIntent = { kind: 'replaceIfVersion', version: old };
          await rejects(fs.writeText(target, third, stale), 'FS_STALE_VERSION', 'writeText with a superseded version');
          await expectUnchanged(fs, target, state, 'after a refused writeText');
          await rejects(fs.writeBytes(target, utf8(third), stale), 'FS_STALE_VERSION', 'writeBytes with a superseded version');
          await expectUnchanged(fs, target, state, 'after a refused writeBytes');
          await rejects(
            fs.editText(target, { oldString: '@token@', newString: '@changed@' }, { version: old }),
            'FS_STALE_VERSION',
            'editText with a superseded version',
          );
          await expectUnchanged(fs, target, state, 'after a refused editText');
          await rejects(fs.remove(target, stale), 'FS_STALE_VERSION', 'remove with a superseded version');
          await expectUnchanged(fs, target, state, 'after a refused remove');
          // The current version is accepted, so the refusals above were about staleness.
          const current = await fs.writeText(target, third, { kind: 'replaceIfVersion', version: now.version });
          equal((await fs.stat(target))?.version as string | undefined, current.version, 'stat after a write guarded by the current version');
          await fs.remove(target, { kind: 'replaceIfVersion', version: current.version });
          await rejects(fs.writeText(target, third, { kind: 'replaceIfVersion', version: current.version }), 'FS_STALE_VERSION', 'writeText guarded by the version of a removed file');
          await expectUnchanged(fs, target, { bytes: undefined }, 'after a refused write to a removed file');
        }),
        0.5,
      );
    },
  },
  {
    id: 'G2',
    title: 'createIfAbsent never overwrites an existing file',
    async run(ctx) {
      const fs = ctx.concurrentFs;
      await ctx.check(
        'existing file',
        fc.asyncProperty(textArb, textArb, async (existing, attempt) => {
          const { target, bytes, version } = await seedFile(fs, `${ctx.dir()}/f.txt`, existing);
          await rejects(fs.writeText(target, attempt, { kind: 'createIfAbsent' }), 'FS_NOT_OBSERVED', 'writeText createIfAbsent over an existing file');
          await rejects(fs.writeBytes(target, utf8(attempt), { kind: 'createIfAbsent' }), 'FS_NOT_OBSERVED', 'writeBytes createIfAbsent over an existing file');
          await expectUnchanged(fs, target, { bytes, version }, 'after refused creates');
          const fresh = await fs.resolve(`${ctx.dir()}/new.txt`);
          const created = await fs.writeText(fresh, attempt, { kind: 'createIfAbsent' });
          equal(created.operation, 'create', 'createIfAbsent on an absent file');
        }),
        0.5,
      );
      await ctx.check(
        'racing creators',
        fc.asyncProperty(
          fc.scheduler(),
          fc.array(fc.record({ bytes: fc.boolean(), group: fc.nat(2) }), { minLength: 2, maxLength: 5 }),
          async (s, creators) => {
            const target = await fs.resolve(`${ctx.dir()}/f.txt`);
            const contents = creators.map((_, i) => `creator ${i}\n`);
            const results = await interleave(
              s,
              creators.map((c, i) => () =>
                c.bytes
                  ? fs.writeBytes(target, utf8(contents[i]!), { kind: 'createIfAbsent' })
                  : fs.writeText(target, contents[i]!, { kind: 'createIfAbsent' }),
              ),
              creators.map((c) => c.group),
            );
            const summary = describeSettled(results, contents.map((_, i) => `creator ${i}`));
            const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
            equal(winners.length, 1, `exactly one createIfAbsent must win (${summary})`);
            for (const r of results) {
              if (r.status === 'rejected' && !(isFsErrorLike(r.reason) && r.reason.code === 'FS_NOT_OBSERVED')) {
                fail(`a losing creator must get FS_NOT_OBSERVED (${summary})`);
              }
            }
            const bytes = await bytesOf(fs, target);
            ok(bytes !== undefined, 'the file is absent after the creators ran');
            bytesEqual(bytes, utf8(contents[winners[0]!]!), `the file must hold the winner's content (${summary})`);
          },
        ),
        0.5,
      );
    },
  },
  {
    id: 'G3',
    title: 'concurrent guarded mutations from one version have exactly one winner',
    async run(ctx) {
      const fs = ctx.concurrentFs;
      const opArb = fc.record({
        kind: fc.constantFrom('text', 'bytes', 'edit', 'edit', 'remove'),
        alias: fc.nat(),
        group: fc.nat(2),
      });
      await ctx.example('two guarded writes started in the same tick', async () => {
        const { target, version } = await seedFile(fs, `${ctx.dir()}/f.txt`, 'base\n');
        const guard: FsWriteIntent = { kind: 'replaceIfVersion', version };
        const results = await Promise.allSettled([fs.writeText(target, 'first\n', guard), fs.writeText(target, 'second\n', guard)]);
        const summary = describeSettled(results, ['first', 'second']);
        equal(results.filter((r) => r.status === 'fulfilled').length, 1, `exactly one must win (${summary})`);
        const loser = results.find((r) => r.status === 'rejected');
        ok(loser && isFsErrorLike(loser.reason) && loser.reason.code === 'FS_STALE_VERSION', `the loser must get FS_STALE_VERSION (${summary})`);
        const winner = results[0]!.status === 'fulfilled' ? 'first\n' : 'second\n';
        equal((await fs.readText(target)).text, winner, `the file must hold the winner's content (${summary})`);
      });
      await ctx.check(
        'racing guarded writes, edits and removes',
        fc.asyncProperty(fc.scheduler(), fc.array(opArb, { minLength: 2, maxLength: 5 }), fc.boolean(), async (s, ops, crlf) => {
          const dir = ctx.dir();
          const eol = crlf ? '\r\n' : '\n';
          const baseText = ops.map((_, i) => `line @${i}@${eol}`).join('');
          const { target, bytes: baseBytes, version } = await seedFile(fs, `${dir}/f.txt`, baseText);
          const aliases = await aliasesOf(ctx, dir, 'f.txt');
          const guard: FsWriteIntent = { kind: 'replaceIfVersion', version };
          const expected: (Uint8Array | undefined)[] = [];
          const labels: string[] = [];
          const tasks = ops.map((op, i): (() => Promise<unknown>) => {
            const alias = aliases[op.alias % aliases.length]!;
            labels.push(`${op.kind} #${i} via ${alias.label}`);
            switch (op.kind) {
              case 'text': {
                const content = `written by ${i}\nsecond line\n`;
                expected.push(textForWrite(content, baseBytes));
                return () => fs.writeText(alias.target, content, guard);
              }
              case 'bytes': {
                const bytes = utf8(`bytes from ${i}`);
                expected.push(bytes);
                return () => fs.writeBytes(alias.target, bytes, guard);
              }
              case 'edit': {
                const edit = { oldString: `@${i}@`, newString: `#${i}#\nadded` };
                const result = applyEdit(baseText, edit.oldString, edit.newString);
                if (!result.ok) throw result.error;
                expected.push(encodeText(result.text, false));
                return () => fs.editText(alias.target, edit, { version });
              }
              default:
                expected.push(undefined);
                return () => fs.remove(alias.target, guard);
            }
          });
          const results = await interleave(s, tasks, ops.map((o) => o.group));
          const summary = describeSettled(results, labels);
          const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
          equal(winners.length, 1, `exactly one guarded mutation must win (${summary})`);
          for (const r of results) {
            if (r.status === 'rejected' && !(isFsErrorLike(r.reason) && r.reason.code === 'FS_STALE_VERSION')) {
              fail(`every loser must get FS_STALE_VERSION (${summary})`);
            }
          }
          const winner = winners[0]!;
          const want = expected[winner];
          const now = await bytesOf(fs, target);
          if (want === undefined) {
            ok(now === undefined, `the winner removed the file, but it holds ${now && showBytes(now)} (${summary})`);
            return;
          }
          ok(now !== undefined, `the file is gone, but the winner was ${labels[winner]} (${summary})`);
          bytesEqual(now, want, `the file must hold the winner's content (${summary})`);
          const won = (results[winner] as PromiseFulfilledResult<{ version: FsVersion }>).value;
          equal((await fs.stat(target))?.version as string | undefined, won.version, 'stat version after the race');
        }),
        0.75,
      );
    },
  },
  {
    id: 'G4',
    title: "an edit's version guard is checked before matching",
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'stale guard with a unique, missing or ambiguous old_string',
        fc.asyncProperty(fc.constantFrom('unique', 'missing', 'ambiguous'), fc.boolean(), async (kind, crlf) => {
          const eol = crlf ? '\r\n' : '\n';
          const { target, version: old } = await seedFile(fs, `${ctx.dir()}/f.txt`, `one${eol}two${eol}`);
          const text = `dup${eol}unique${eol}dup${eol}`;
          const now = await fs.writeText(target, text);
          const oldString = kind === 'unique' ? 'unique' : kind === 'missing' ? 'absent text' : 'dup';
          await rejects(
            fs.editText(target, { oldString, newString: 'changed' }, { version: old }),
            'FS_STALE_VERSION',
            `editText with a superseded version and a ${kind} old_string`,
          );
          await expectUnchanged(fs, target, { bytes: utf8(text), version: now.version }, 'after a refused edit');
        }),
        0.25,
      );
    },
  },
];

export const guardRules: Rule[] = [...writeGuardRules, ...atomicityRules, ...swapRules];
