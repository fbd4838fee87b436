import fc from 'fast-check';
import { applyEdit, encodeText, textForWrite, type FsExpect, type FsTarget, type FsVersion, type FsWriteIntent } from '../../seam/index.js';
import { textArb } from '../arbitraries.js';
import {
  aliasesOf,
  bytesEqual,
  bytesOf,
  deepEqual,
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

const distinctPair = fc.tuple(textArb, textArb).filter(([a, b]) => a !== b);

export const guardRules: Rule[] = [
  {
    id: 'G1',
    title: 'a stale replaceIfVersion is refused and writes nothing',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'every mutation with a superseded version',
        fc.asyncProperty(distinctPair, textArb, async ([first, second], third) => {
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
  {
    id: 'G5',
    title: 'concurrent readers see whole old or whole new content',
    async run(ctx) {
      const fs = ctx.concurrentFs;
      const writerArb = fc.record({
        bytes: fc.boolean(),
        size: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 160 * 1024 })),
        group: fc.nat(3),
      });
      const readerArb = fc.record({ kind: fc.constantFrom('text', 'stream', 'bytes'), group: fc.nat(3) });
      await ctx.example('readers polling while a large write runs', async () => {
        const big = (letter: string) => `${letter.repeat(1023)}\n`.repeat(192);
        const { target, version } = await seedFile(fs, `${ctx.dir()}/f.txt`, big('o'));
        const writing = fs.writeText(target, big('N'));
        const seen: { text: string; version: string }[] = [];
        for (let i = 0; i < 8; i++) {
          // A macrotask between reads, so a write that publishes in steps is caught between them.
          await new Promise((resolve) => setImmediate(resolve));
          seen.push(await fs.readText(target));
        }
        const written = await writing;
        for (const [i, read] of seen.entries()) {
          const state = read.text === big('o') ? version : read.text === big('N') ? written.version : undefined;
          ok(state !== undefined, `read ${i} during the write saw neither the old nor the new content (${read.text.length} chars)`);
          equal(read.version as string, state, `read ${i}: the version of the content it saw`);
        }
      });
      await ctx.check(
        'readers racing unconditional writers',
        fc.asyncProperty(
          fc.scheduler(),
          fc.array(writerArb, { minLength: 1, maxLength: 3 }),
          fc.array(readerArb, { minLength: 1, maxLength: 4 }),
          fc.integer({ min: 1, max: 64 * 1024 }),
          async (s, writers, readers, initialSize) => {
            // Each state fills with its own letter, so a torn read matches none of them.
            const fill = (letter: string, size: number) =>
              Array.from({ length: Math.ceil(size / 64) }, () => `${letter.repeat(63)}\n`).join('').slice(0, size);
            const initial = fill('o', initialSize);
            const texts = [initial, ...writers.map((w, i) => fill('ABC'[i]!, w.size))];
            const { target, version } = await seedFile(fs, `${ctx.dir()}/f.txt`, initial);
            const versions: (string | undefined)[] = [version, ...writers.map(() => undefined)];
            const tasks: (() => Promise<{ text: string; version: string } | undefined>)[] = [];
            const labels: string[] = [];
            writers.forEach((w, i) => {
              labels.push(`writer ${i} (${w.size} chars)`);
              tasks.push(async () => {
                const out = w.bytes ? await fs.writeBytes(target, utf8(texts[i + 1]!)) : await fs.writeText(target, texts[i + 1]!);
                versions[i + 1] = out.version;
                return undefined;
              });
            });
            readers.forEach((r) => {
              labels.push(`${r.kind} reader`);
              tasks.push(async () => {
                if (r.kind === 'text') return fs.readText(target);
                if (r.kind === 'bytes') {
                  const got = await fs.readBytes(target, { maxBytes: 1 << 20 });
                  return { text: Buffer.from(got.bytes).toString('utf8'), version: got.version };
                }
                const stream = await fs.streamText(target);
                let text = '';
                for await (const chunk of stream.chunks) text += chunk;
                return { text, version: stream.version };
              });
            });
            const groups = [...writers.map((w) => w.group), ...readers.map((r) => r.group)];
            const results = await interleave(s, tasks, groups);
            const summary = describeSettled(results, labels);
            results.forEach((r, i) => {
              if (r.status === 'rejected') fail(`${labels[i]} failed (${summary})`);
              const seen = r.value;
              if (seen === undefined) return;
              const state = texts.indexOf(seen.text);
              ok(state !== -1, `${labels[i]} saw content that is neither the old nor any new content: ${JSON.stringify(seen.text.slice(0, 80))}… (${seen.text.length} chars) (${summary})`);
              equal(seen.version, versions[state], `${labels[i]} must report the version of the content it saw`);
            });
            const final = await fs.readText(target);
            const state = texts.indexOf(final.text);
            ok(state > 0, `after the writers the file must hold one writer's content (${summary})`);
            equal(final.version as string, versions[state], 'version of the final content');
          },
        ),
        0.5,
      );
    },
  },
  {
    id: 'G6',
    title: 'concurrent unguarded read-modify-write calls lose no update',
    async run(ctx) {
      const fs = ctx.concurrentFs;
      const edits = (n: number, eol: string) => ({
        text: Array.from({ length: n }, (_, i) => `line @${i}@${eol}`).join(''),
        edit: (i: number) => ({ oldString: `@${i}@`, newString: `#${i}#` }),
      });
      const expectAll = async (target: FsTarget, n: number, results: PromiseSettledResult<unknown>[], labels: string[]) => {
        const summary = describeSettled(results, labels);
        results.forEach((r, i) => ok(r.status === 'fulfilled', `unguarded ${labels[i]} must succeed (${summary})`));
        const text = (await fs.readText(target)).text;
        for (let i = 0; i < n; i++) {
          ok(text.includes(`#${i}#`) && !text.includes(`@${i}@`), `the change of ${labels[i]} was lost: the file holds ${JSON.stringify(text)} (${summary})`);
        }
      };
      await ctx.example('edits started in the same tick', async () => {
        const n = 6;
        const { text, edit } = edits(n, '\n');
        const { target } = await seedFile(fs, `${ctx.dir()}/f.txt`, text);
        const results = await Promise.allSettled(Array.from({ length: n }, (_, i) => fs.editText(target, edit(i))));
        await expectAll(target, n, results, results.map((_, i) => `edit #${i}`));
      });
      await ctx.check(
        'interleaved unguarded edits through every alias',
        fc.asyncProperty(
          fc.scheduler(),
          fc.array(fc.record({ alias: fc.nat(), group: fc.nat(2) }), { minLength: 2, maxLength: 5 }),
          fc.boolean(),
          async (s, ops, crlf) => {
            const dir = ctx.dir();
            const { text, edit } = edits(ops.length, crlf ? '\r\n' : '\n');
            const { target } = await seedFile(fs, `${dir}/f.txt`, text);
            const aliases = await aliasesOf(ctx, dir, 'f.txt');
            const labels = ops.map((op, i) => `edit #${i} via ${aliases[op.alias % aliases.length]!.label}`);
            const tasks = ops.map((op, i) => () => fs.editText(aliases[op.alias % aliases.length]!.target, edit(i)));
            const results = await interleave(s, tasks, ops.map((o) => o.group));
            await expectAll(target, ops.length, results, labels);
          },
        ),
        0.5,
      );
    },
  },
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
        fc.asyncProperty(distinctPair, fc.boolean(), async ([first, second], nested) => {
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
