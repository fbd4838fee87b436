import fc from 'fast-check';
import { bodyTextArb, joinLines, lineArb, linesArb, notTextArb, swapEols, textArb, type Lines } from '../arbitraries.js';
import {
  BOM,
  bytesEqual,
  concatBytes,
  describeError,
  equal,
  expectUnchanged,
  fail,
  isFsErrorLike,
  ok,
  rejects,
  seedFile,
  utf8,
  type Rule,
  type RuleContext,
} from '../harness.js';
import { findMatches, isCrlfDominant } from '../reference.js';
import type { FsErrorLike } from '../harness.js';

/** Lines whose content is unique (a `L<i>:` prefix), so a span of them matches exactly once. */
const markedLinesArb = linesArb({ minLines: 2, maxLines: 8 }).map(
  (l): Lines => ({ ...l, lines: l.lines.map((line, i) => `L${i}:${line}`) }),
);

export const textRules: Rule[] = [
  {
    id: 'L1',
    title: 'matching ignores LF versus CRLF',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'old_string with the other line endings',
        fc.asyncProperty(markedLinesArb, fc.nat(), fc.nat(), async (l, a, b) => {
          const first = a % (l.lines.length - 1);
          const last = first + 1 + (b % (l.lines.length - 1 - first));
          const text = joinLines(l);
          // The span from the start of line `first` to the end of line `last`'s content.
          const spanLines = l.lines.slice(first, last + 1);
          const asInFile = spanLines.map((line, i) => (i < spanLines.length - 1 ? line + l.eols[first + i]! : line)).join('');
          const oldString = swapEols(asInFile);
          fc.pre(findMatches(text, oldString).length === 1);
          const start = text.indexOf(asInFile);
          const { target } = await seedFile(fs, `${ctx.dir()}/f.txt`, text);
          const done = await fs.editText(target, { oldString, newString: 'REPLACED' });
          equal(done.replacements, 1, 'replacements');
          const expected = text.slice(0, start) + 'REPLACED' + text.slice(start + asInFile.length);
          equal((await fs.readText(target)).text, expected, `old_string ${JSON.stringify(oldString)} must match ${JSON.stringify(asInFile)}`);
        }),
      );
    },
  },
  {
    id: 'L2',
    title: "inserted line breaks take the matched region's line ending",
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('a mixed-ending file', async () => {
        const { target } = await seedFile(fs, `${ctx.dir()}/f.txt`, 'a\r\nb @K@\r\nc\nd @L@\ne\r\n');
        await fs.editText(target, { oldString: '@K@', newString: 'one\ntwo' });
        await fs.editText(target, { oldString: '@L@', newString: 'three\r\nfour' });
        equal(
          (await fs.readText(target)).text,
          'a\r\nb one\r\ntwo\r\nc\nd three\nfour\ne\r\n',
          'new lines take CRLF in a CRLF line and LF in an LF line; untouched lines keep theirs',
        );
      });
      await ctx.check(
        'multi-line new_string in LF, CRLF and mixed files',
        fc.asyncProperty(markedLinesArb, fc.nat(), fc.constantFrom('\n', '\r\n'), lineArb, async (l, at, newEol, tail) => {
          const k = at % l.lines.length;
          const marked: Lines = { ...l, lines: l.lines.map((line, i) => (i === k ? `${line}@K@` : line)) };
          const text = joinLines(marked);
          fc.pre(text.split('@K@').length === 2);
          const newString = ['one', 'two', tail].join(newEol);
          // The region's ending: that of the marked line, else (last line, no ending) the line before.
          const hasEol = k < l.lines.length - 1 || l.finalEol;
          const eol = hasEol ? l.eols[k]! : k > 0 ? l.eols[k - 1]! : '\n';
          const { target } = await seedFile(fs, `${ctx.dir()}/f.txt`, text);
          await fs.editText(target, { oldString: '@K@', newString });
          const expected = text.replace('@K@', () => newString.replaceAll(newEol, eol));
          equal((await fs.readText(target)).text, expected, `after inserting ${JSON.stringify(newString)} into line ${k + 1} of ${JSON.stringify(text)}`);
        }),
      );
    },
  },
  {
    id: 'L3',
    title: 'a lone CR is an ordinary character',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('lone CR in text, old_string and new_string', async () => {
        const dir = ctx.dir();
        const a = await seedFile(fs, `${dir}/a.txt`, 'a\rb\r\nc');
        equal((await fs.readText(a.target)).text, 'a\rb\r\nc', 'readText keeps a lone CR');
        await rejects(fs.editText(a.target, { oldString: 'a\nb', newString: 'X' }), 'FS_EDIT_NOT_FOUND', 'a lone CR does not match a line break');
        await rejects(fs.editText(a.target, { oldString: 'a\r\nb', newString: 'X' }), 'FS_EDIT_NOT_FOUND', 'a lone CR does not match CRLF');
        const done = await fs.editText(a.target, { oldString: 'b\r\nc', newString: 'p\rq\nr' });
        equal(done.lines[0]?.start, 1, 'a lone CR does not start a new line (edit line range)');
        equal((await fs.readText(a.target)).text, 'a\rp\rq\r\nr', 'a lone CR in new_string is kept; its LF takes the CRLF of the region');
        const b = await seedFile(fs, `${dir}/b.txt`, 'x\rx\rx\nz');
        const err = await rejects(fs.editText(b.target, { oldString: 'x', newString: 'y' }), 'FS_AMBIGUOUS_EDIT', 'three matches on one line');
        // Outside quoted paths, the only numbers are the count (3) and each match's line (1).
        const numbers = (err.message.replace(/"[^"]*"/g, '').match(/\d+/g) ?? []).map(Number);
        ok(numbers.includes(3) && numbers.includes(1) && numbers.every((n) => n === 1 || n === 3), `all three matches are on line 1: ${err.message}`);
        const c = await seedFile(fs, `${dir}/c.txt`, 'p\rq\nz');
        const edited = await fs.editText(c.target, { oldString: 'z', newString: 'Z' });
        equal(edited.lines[0]?.start, 2, 'the line after one LF is line 2, whatever lone CRs precede it');
      });
      await ctx.check(
        'lone CRs survive edits elsewhere',
        fc.asyncProperty(bodyTextArb, textArb, async (before, after) => {
          const text = `${before}\r${after}@E@`;
          const { target } = await seedFile(fs, `${ctx.dir()}/f.txt`, text);
          await fs.editText(target, { oldString: '@E@', newString: '#' });
          equal((await fs.readText(target)).text, `${before}\r${after}#`, 'content after an edit past a lone CR');
        }),
        0.25,
      );
    },
  },
  {
    id: 'L4',
    title: 'a UTF-8 BOM is hidden by read and kept by edit and write',
    async run(ctx) {
      const { fs } = ctx;
      const bodyArb = bodyTextArb.map((t) => `${t}@B@`);
      await ctx.example('a BOM followed by the character U+FEFF', async () => {
        // Text that itself starts with U+FEFF: an encoder that adds a BOM only when the text has none drops one.
        const { target } = await seedFile(fs, `${ctx.dir()}/f.txt`, concatBytes(BOM, utf8('\uFEFFkeep @B@\n')));
        equal((await fs.readText(target)).text, '\uFEFFkeep @B@\n', 'readText hides one BOM and shows the U+FEFF after it');
        await fs.editText(target, { oldString: '@B@', newString: '@edited@' });
        bytesEqual((await fs.readBytes(target, { maxBytes: 1 << 20 })).bytes, concatBytes(BOM, utf8('\uFEFFkeep @edited@\n')), 'edit keeps the BOM and the U+FEFF');
      });
      await ctx.check(
        'read, stream, edit and write of a BOM file',
        fc.asyncProperty(bodyArb, fc.string({ unit: fc.constantFrom('a', 'é', '😀', ' '), maxLength: 6 }), async (body, content) => {
          const { target } = await seedFile(fs, `${ctx.dir()}/f.txt`, concatBytes(BOM, utf8(body)));
          const read = await fs.readText(target);
          equal(read.text, body, 'readText hides the BOM');
          equal(read.bom, true, 'readText reports the BOM');
          const stream = await fs.streamText(target);
          let streamed = '';
          for await (const chunk of stream.chunks) streamed += chunk;
          equal(streamed, body, 'streamText hides the BOM');
          await fs.editText(target, { oldString: '@B@', newString: '@edited@' });
          bytesEqual((await fs.readBytes(target, { maxBytes: 1 << 20 })).bytes, concatBytes(BOM, utf8(body.replace('@B@', '@edited@'))), 'edit keeps the BOM');
          await fs.writeText(target, content);
          bytesEqual((await fs.readBytes(target, { maxBytes: 1 << 20 })).bytes, concatBytes(BOM, utf8(content)), 'write over a BOM file keeps the BOM');
          const fresh = await fs.resolve(`${ctx.dir()}/new.txt`);
          await fs.writeText(fresh, content);
          bytesEqual((await fs.readBytes(fresh, { maxBytes: 1 << 20 })).bytes, utf8(content), 'a new file gets no BOM');
        }),
        0.5,
      );
    },
  },
  {
    id: 'L5',
    title: "write keeps an existing file's CRLF style",
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'write over LF, CRLF and mixed files',
        fc.asyncProperty(fc.option(linesArb().map(joinLines), { nil: undefined }), linesArb().map(joinLines), fc.boolean(), async (existing, content, bom) => {
          const target = await fs.resolve(`${ctx.dir()}/f.txt`);
          if (existing !== undefined) await fs.writeBytes(target, concatBytes(bom ? BOM : new Uint8Array(), utf8(existing)));
          await fs.writeText(target, content);
          const keepCrlf = existing !== undefined && isCrlfDominant(existing) && !content.includes('\r\n') && content.includes('\n');
          const text = keepCrlf ? content.replaceAll('\n', '\r\n') : content;
          // A leading U+FEFF in the existing text is a BOM in its bytes too.
          const keepBom = existing !== undefined && (bom || existing.startsWith('\uFEFF'));
          // Content that starts with U+FEFF carries its own BOM and does not get a second one.
          const expected = concatBytes(keepBom && !text.startsWith('\uFEFF') ? BOM : new Uint8Array(), utf8(text));
          bytesEqual(
            (await fs.readBytes(target, { maxBytes: 1 << 20 })).bytes,
            expected,
            `writing ${JSON.stringify(content)} over ${existing === undefined ? 'nothing' : JSON.stringify(existing)}`,
          );
        }),
      );
    },
  },
  {
    id: 'T1',
    title: 'non-text files are refused by read and edit and left intact',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'NUL, invalid UTF-8 and UTF-16',
        fc.asyncProperty(notTextArb, async (bad) => {
          const { target, bytes, version } = await seedFile(fs, `${ctx.dir()}/f.bin`, bad.bytes);
          const check = (err: FsErrorLike, what: string) => {
            if (bad.kind === 'nul') ok(/NUL/.test(err.message), `${what}: the message must say a NUL byte was found: ${err.message}`);
            else if (bad.kind === 'utf16') ok(/UTF-16/i.test(err.message), `${what}: the message must name UTF-16: ${err.message}`);
            else {
              ok(/UTF-8/i.test(err.message), `${what}: the message must name invalid UTF-8: ${err.message}`);
              ok(new RegExp(`\\bbyte ${bad.offset}\\b`).test(err.message), `${what}: the message must give the offset (byte ${bad.offset}): ${err.message}`);
            }
          };
          check(await rejects(fs.readText(target), 'FS_NOT_TEXT', `readText of ${bad.kind}`), 'readText');
          check(await rejects(fs.streamText(target), 'FS_NOT_TEXT', `streamText of ${bad.kind}`), 'streamText');
          check(await rejects(fs.editText(target, { oldString: 'a', newString: 'b' }), 'FS_NOT_TEXT', `editText of ${bad.kind}`), 'editText');
          check(
            await rejects(fs.editText(target, { oldString: 'a', newString: 'b', replaceAll: true }, { version }), 'FS_NOT_TEXT', `guarded editText of ${bad.kind}`),
            'guarded editText',
          );
          await expectUnchanged(fs, target, { bytes, version }, `after reading and editing ${bad.kind}`);
        }),
      );
    },
  },
  {
    id: 'T2',
    title: 'directories and special files are not read as files',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('a directory', async () => {
        const dir = ctx.dir();
        await seedFile(fs, `${dir}/sub/inner.txt`, 'inside');
        const sub = await fs.resolve(`${dir}/sub`);
        equal((await fs.stat(sub))?.type, 'directory', 'stat of a directory');
        await rejects(fs.readText(sub), 'FS_NOT_REGULAR_FILE', 'readText of a directory');
        await rejects(fs.streamText(sub), 'FS_NOT_REGULAR_FILE', 'streamText of a directory');
        await rejects(fs.readBytes(sub, { maxBytes: 1024 }), 'FS_NOT_REGULAR_FILE', 'readBytes of a directory');
        await rejects(fs.editText(sub, { oldString: 'a', newString: 'b' }), 'FS_NOT_REGULAR_FILE', 'editText of a directory');
        await refusedAndStill(ctx, sub, 'directory', () => fs.writeText(sub, 'clobber'), 'writeText over a directory');
        await refusedAndStill(ctx, sub, 'directory', () => fs.remove(sub), 'remove of a directory');
        equal((await fs.listDir(sub)).map((e) => e.name).join(','), 'inner.txt', 'the directory keeps its entry');
      });
      const mkfifo = ctx.subject.setup?.mkfifo;
      if (mkfifo) {
        await ctx.example('a FIFO', async () => {
          const dir = ctx.dir();
          await seedFile(fs, `${dir}/keep.txt`, '');
          await mkfifo.call(ctx.subject.setup, `${dir}/fifo`);
          const fifo = await fs.resolve(`${dir}/fifo`);
          equal((await fs.stat(fifo))?.type, 'other', 'stat of a FIFO');
          await rejects(watchdog(fs.readText(fifo), 'readText of a FIFO'), 'FS_NOT_REGULAR_FILE', 'readText of a FIFO');
          await rejects(watchdog(fs.readBytes(fifo, { maxBytes: 1024 }), 'readBytes of a FIFO'), 'FS_NOT_REGULAR_FILE', 'readBytes of a FIFO');
          await rejects(watchdog(fs.editText(fifo, { oldString: 'a', newString: 'b' }), 'editText of a FIFO'), 'FS_NOT_REGULAR_FILE', 'editText of a FIFO');
          await refusedAndStill(ctx, fifo, 'other', () => watchdog(fs.writeText(fifo, 'x'), 'writeText over a FIFO'), 'writeText over a FIFO');
        });
      }
    },
  },
];

async function refusedAndStill(ctx: RuleContext, target: Parameters<RuleContext['fs']['stat']>[0], type: string, op: () => Promise<unknown>, what: string) {
  try {
    await op();
  } catch (err) {
    if (!isFsErrorLike(err)) fail(`${what}: rejected with a non-FsError: ${describeError(err)}`);
    equal((await ctx.fs.stat(target))?.type, type, `${what}: the entry must be unchanged`);
    return;
  }
  fail(`${what}: expected a refusal, but it succeeded`);
}

/**
 * Turns a hang into a failure. This is not a timing requirement: a read of a special file must
 * settle at once, and ten seconds only bounds how long the suite waits to say that it did not.
 */
function watchdog<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle (it blocks instead of refusing)`)), 10_000);
    timer.unref?.();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
