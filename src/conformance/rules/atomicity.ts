import fc from 'fast-check';
import type { FileSystem, FsTarget } from '../../seam/index.js';
import {
  aliasesOf,
  describeSettled,
  equal,
  fail,
  interleave,
  ok,
  seedFile,
  utf8,
  type Rule,
} from '../harness.js';

const writerArb = fc.record({
  bytes: fc.boolean(),
  size: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 160 * 1024 })),
  group: fc.nat(3),
});
const readerArb = fc.record({ kind: fc.constantFrom('text', 'stream', 'bytes'), group: fc.nat(3) });

/** Reads in turn while one large write runs: each sees the old content or the new, with its version. */
async function readersDuringLargeWrite(fs: FileSystem, path: string): Promise<void> {
  const big = (letter: string) => `${letter.repeat(1023)}\n`.repeat(192);
  const { target, version } = await seedFile(fs, path, big('o'));
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
}

/** G5-G6: readers never see a torn write, and unguarded read-modify-write calls lose no update. */
export const atomicityRules: Rule[] = [
  {
    id: 'G5',
    title: 'concurrent readers see whole old or whole new content',
    async run(ctx) {
      const fs = ctx.concurrentFs;
      await ctx.example('readers polling while a large write runs', () => readersDuringLargeWrite(fs, `${ctx.dir()}/f.txt`));
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
];
