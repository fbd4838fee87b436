import fc from 'fast-check';
import { applyEdit } from '../../seam/index.js';
import { bodyTextArb, DOLLAR_PATTERNS, fileTextArb, oldPickArb, pickOld, replacementArb, textArb, wordArb } from '../arbitraries.js';
import {
  BOM,
  bytesEqual,
  concatBytes,
  deepEqual,
  equal,
  expectUnchanged,
  fail,
  ok,
  rejects,
  seedFile,
  settle,
  show,
  utf8,
  type Rule,
} from '../harness.js';
import { findMatches, referenceEdit } from '../reference.js';

/** Text from a tiny alphabet, so that matches repeat and overlap. */
const dupTextArb = fc
  .array(fc.constantFrom('a', 'b', 'ab', 'aa', 'x', '\n', '\r\n', '\r'), { maxLength: 24 })
  .map((p) => p.join(''));
const dupOldArb = fc.constantFrom('a', 'b', 'ab', 'aa', 'aaa', 'ba', 'a\nb', 'a\r\nb', 'b\n', 'x', 'c');

/** The message without its quoted parts (paths), so their digits cannot pass for a count or a line. */
const unquoted = (message: string) => message.replace(/"[^"]*"/g, '""');

export const editRules: Rule[] = [
  {
    id: 'E1',
    title: 'an empty old_string is rejected',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'empty old_string',
        fc.asyncProperty(textArb, replacementArb, fc.boolean(), async (text, newString, replaceAll) => {
          const { target, bytes, version } = await seedFile(fs, `${ctx.dir()}/f.txt`, text);
          await rejects(fs.editText(target, { oldString: '', newString, replaceAll }), 'FS_INVALID_ARGUMENT', 'editText with an empty old_string');
          await expectUnchanged(fs, target, { bytes, version }, 'after a refused edit');
        }),
        0.25,
      );
    },
  },
  {
    id: 'E2',
    title: 'old_string equal to new_string is rejected',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'identical strings',
        fc.asyncProperty(textArb, oldPickArb, fc.boolean(), async (text, pick, replaceAll) => {
          const { target, bytes, version } = await seedFile(fs, `${ctx.dir()}/f.txt`, text);
          const same = pickOld(text, pick);
          await rejects(
            fs.editText(target, { oldString: same, newString: same, replaceAll }),
            'FS_INVALID_ARGUMENT',
            'editText with old_string === new_string',
          );
          await expectUnchanged(fs, target, { bytes, version }, 'after a refused edit');
        }),
        0.25,
      );
    },
  },
  {
    id: 'E3',
    title: 'matches are counted non-overlapping; zero or ambiguous matches are refused',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('"aaa" has one non-overlapping "aa"; "aaaa" has two', async () => {
        const one = await seedFile(fs, `${ctx.dir()}/one.txt`, 'aaa');
        const done = await fs.editText(one.target, { oldString: 'aa', newString: 'X' });
        equal(done.replacements, 1, 'replacements');
        bytesEqual((await fs.readBytes(one.target, { maxBytes: 64 })).bytes, utf8('Xa'), 'content after replacing the first "aa" of "aaa"');
        const two = await seedFile(fs, `${ctx.dir()}/two.txt`, 'aaaa\r\naaaa');
        const err = await rejects(fs.editText(two.target, { oldString: 'aa', newString: 'X' }), 'FS_AMBIGUOUS_EDIT', 'editText of "aa" in "aaaa\\r\\naaaa"');
        ok(/\b4\b/.test(unquoted(err.message)), `the message must give the count (4): ${err.message}`);
        ok(/\b1\b/.test(unquoted(err.message)) && /\b2\b/.test(unquoted(err.message)), `the message must give the lines (1 and 2): ${err.message}`);
        await expectUnchanged(fs, two.target, { bytes: two.bytes, version: two.version }, 'after an ambiguous edit');
        const all = await fs.editText(two.target, { oldString: 'aa', newString: 'X', replaceAll: true });
        equal(all.replacements, 4, 'replace_all count');
        bytesEqual((await fs.readBytes(two.target, { maxBytes: 64 })).bytes, utf8('XX\r\nXX'), 'content after replace_all');
      });
      await ctx.check(
        'counting, not found, ambiguous and replace_all',
        fc.asyncProperty(dupTextArb, dupOldArb, fc.constantFrom('X', '', 'YY\n', 'a'), fc.boolean(), async (text, oldString, newString, replaceAll) => {
          fc.pre(oldString.replaceAll('\r\n', '\n') !== newString.replaceAll('\r\n', '\n'));
          const { target, bytes, version } = await seedFile(fs, `${ctx.dir()}/f.txt`, text);
          const matches = findMatches(text, oldString);
          const request = { oldString, newString, replaceAll };
          const what = `editText ${JSON.stringify(request)} on ${JSON.stringify(text)}`;
          if (matches.length === 0) {
            await rejects(fs.editText(target, request), 'FS_EDIT_NOT_FOUND', what);
            await expectUnchanged(fs, target, { bytes, version }, `${what}, not found`);
            return;
          }
          if (matches.length > 1 && !replaceAll) {
            const err = await rejects(fs.editText(target, request), 'FS_AMBIGUOUS_EDIT', what);
            ok(new RegExp(`\\b${matches.length}\\b`).test(unquoted(err.message)), `${what}: the message must give the count ${matches.length}: ${err.message}`);
            for (const line of new Set(matches.slice(0, 20).map((m) => m.line))) {
              ok(new RegExp(`\\b${line}\\b`).test(unquoted(err.message)), `${what}: the message must list line ${line}: ${err.message}`);
            }
            await expectUnchanged(fs, target, { bytes, version }, `${what}, ambiguous`);
            return;
          }
          const done = await fs.editText(target, request);
          equal(done.replacements, matches.length, `${what}: replacements`);
          equal(done.lines.length, matches.length, `${what}: one line range per replacement`);
        }),
      );
    },
  },
  {
    id: 'E4',
    title: 'replacement text is literal ($ patterns are not expanded)',
    async run(ctx) {
      const { fs } = ctx;
      const dollarArb = fc
        .array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...DOLLAR_PATTERNS) }, { weight: 1, arbitrary: wordArb }), { minLength: 1, maxLength: 5 })
        .map((p) => p.join(''));
      const plainArb = bodyTextArb.map((t) => t.replaceAll('@@', '@'));
      await ctx.example('every $ pattern', async () => {
        const { target } = await seedFile(fs, `${ctx.dir()}/f.txt`, 'left (x) right\n');
        const newString = "$& $$ $` $' $1 $<n> $";
        await fs.editText(target, { oldString: '(x)', newString });
        equal((await fs.readText(target)).text, `left ${newString} right\n`, 'new_string written as-is');
      });
      await ctx.check(
        '$ patterns in new_string',
        fc.asyncProperty(plainArb, plainArb, dollarArb, fc.boolean(), async (before, after, newString, twice) => {
          const text = twice ? `${before}@@T@@${after}@@T@@` : `${before}@@T@@${after}`;
          const { target } = await seedFile(fs, `${ctx.dir()}/f.txt`, text);
          const done = await fs.editText(target, { oldString: '@@T@@', newString, replaceAll: twice });
          equal(done.replacements, twice ? 2 : 1, 'replacements');
          const expected = twice ? `${before}${newString}${after}${newString}` : `${before}${newString}${after}`;
          // Bytes, not readText: a new_string that lands at the very start may begin with U+FEFF.
          const { bytes } = await fs.readBytes(target, { maxBytes: 1 << 20 });
          bytesEqual(bytes, utf8(expected), `new_string ${JSON.stringify(newString)} must be written as-is`);
        }),
      );
    },
  },
  {
    id: 'E5',
    title: 'only the matched spans change',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'bytes outside a unique match',
        fc.asyncProperty(fileTextArb, oldPickArb, replacementArb, async (file, pick, newString) => {
          // A leading U+FEFF is the BOM once it is in the file.
          const bom = file.bom || file.text.startsWith('\uFEFF');
          const text = file.bom ? file.text : file.text.replace(/^\uFEFF/, '');
          const oldString = pickOld(text, pick);
          const matches = findMatches(text, oldString);
          fc.pre(matches.length === 1 && oldString.replaceAll('\r\n', '\n') !== newString.replaceAll('\r\n', '\n'));
          const span = matches[0]!;
          const prefix = concatBytes(bom ? BOM : new Uint8Array(), utf8(text.slice(0, span.start)));
          const suffix = utf8(text.slice(span.end));
          const { target } = await seedFile(fs, `${ctx.dir()}/f.txt`, concatBytes(prefix, utf8(text.slice(span.start, span.end)), suffix));
          await fs.editText(target, { oldString, newString });
          const after = Buffer.from((await fs.readBytes(target, { maxBytes: 1 << 20 })).bytes);
          const what = `editing ${JSON.stringify(oldString)} → ${JSON.stringify(newString)} in ${JSON.stringify(text)} (bom ${bom})`;
          ok(after.byteLength >= prefix.byteLength + suffix.byteLength, `${what}: the file shrank below its untouched bytes`);
          bytesEqual(after.subarray(0, prefix.byteLength), prefix, `${what}: the bytes before the match`);
          bytesEqual(after.subarray(after.byteLength - suffix.byteLength), suffix, `${what}: the bytes after the match`);
          const inserted = after.subarray(prefix.byteLength, after.byteLength - suffix.byteLength).toString('utf8');
          equal(inserted.replaceAll('\r\n', '\n'), newString.replaceAll('\r\n', '\n'), `${what}: the replaced span holds new_string up to line endings`);
        }),
      );
    },
  },
  {
    id: 'E6',
    title: "a not-found error names the near match's line and kind",
    async run(ctx) {
      const { fs } = ctx;
      const kinds = {
        indentation: { pattern: /indent/i },
        'trailing whitespace': { pattern: /trailing/i },
        'line endings': { pattern: /line ending|carriage return/i },
        quotes: { pattern: /quote/i },
        'line-number prefix': { pattern: /line.number/i },
      } as const;
      type Kind = keyof typeof kinds;
      await ctx.check(
        'one kind of near miss',
        fc.asyncProperty(
          fc.constantFrom(...(Object.keys(kinds) as Kind[])),
          fc.integer({ min: 2, max: 9 }),
          fc.nat(),
          fc.boolean(),
          fc.boolean(),
          async (kind, count, at, tabs, crlf) => {
            const k = at % count;
            // A stray CR before a CRLF is the line-ending mismatch; before an LF it would be a CRLF.
            const eol = crlf || kind === 'line endings' ? '\r\n' : '\n';
            const indent = tabs ? '\t' : '    ';
            const lines = Array.from({ length: count }, (_, i) => `${indent}value_${i} = "v${i}";`);
            const fileLines = lines.slice();
            const fileEols: string[] = lines.map(() => eol);
            // Spanning two lines, so that a prefix of the file's line cannot match exactly.
            const twoLines = k + 1 < count ? `${lines[k]}\n${lines[k + 1]}` : `${lines[k]}\n`;
            let oldString: string;
            switch (kind) {
              case 'indentation':
                oldString = `${tabs ? '    ' : '\t'}value_${k} = "v${k}";`;
                break;
              case 'trailing whitespace':
                fileLines[k] = `${lines[k]}  `;
                oldString = twoLines;
                break;
              case 'line endings':
                fileEols[k] = `\r${eol}`;
                oldString = twoLines;
                break;
              case 'quotes':
                oldString = `value_${k} = \u201cv${k}\u201d;`;
                break;
              default:
                oldString = `${k + 1}: ${lines[k]}`;
            }
            const text = fileLines.map((l, i) => l + fileEols[i]!).join('');
            const { target, bytes, version } = await seedFile(fs, `${ctx.dir()}/f.txt`, text);
            const what = `editText of ${JSON.stringify(oldString)} (${kind}) in ${JSON.stringify(text)}`;
            const err = await rejects(fs.editText(target, { oldString, newString: 'replaced' }), 'FS_EDIT_NOT_FOUND', what);
            ok(new RegExp(`\\bline ${k + 1}\\b`).test(err.message), `${what}: the message must name line ${k + 1}: ${err.message}`);
            ok(kinds[kind].pattern.test(err.message), `${what}: the message must name the mismatch (${kind}): ${err.message}`);
            await expectUnchanged(fs, target, { bytes, version }, `${what}: no fuzzy match may be applied`);
          },
        ),
        0.5,
      );
    },
  },
  {
    id: 'E7',
    title: 'edits equal the pure applyEdit on the decoded text',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'any edit',
        fc.asyncProperty(fileTextArb, oldPickArb, replacementArb, fc.boolean(), async ({ text, bom }, pick, newString, replaceAll) => {
          const oldString = pickOld(text, pick);
          const bytes = concatBytes(bom ? BOM : new Uint8Array(), utf8(text));
          const { target, version } = await seedFile(fs, `${ctx.dir()}/f.txt`, bytes);
          // The reference sees what read shows: the text after one leading BOM.
          const shown = Buffer.from(bytes).subarray(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0);
          const hadBom = shown.byteLength !== bytes.byteLength;
          const expected = applyEdit(shown.toString('utf8'), oldString, newString, replaceAll);
          // The seam's engine is itself held to the plain restatement of the rules.
          const plain = referenceEdit(shown.toString('utf8'), oldString, newString, replaceAll);
          if (expected.ok !== plain.ok || (expected.ok && plain.ok && (expected.text !== plain.text || expected.replacements !== plain.replacements))) {
            fail(`applyEdit and the reference edit disagree on ${JSON.stringify({ text, oldString, newString, replaceAll })}: ${show(expected.ok ? expected.text : expected.error.code)} vs ${show(plain.ok ? plain.text : plain.code)}`);
          }
          if (!expected.ok && !plain.ok) equal(expected.error.code, plain.code, 'applyEdit and the reference edit: error code');
          const request = { oldString, newString, replaceAll };
          const what = `editText ${JSON.stringify(request)} on ${JSON.stringify(text)} (bom ${bom})`;
          const got = await settle(fs.editText(target, request), what);
          if (!expected.ok) {
            ok(!got.ok, `${what}: expected ${expected.error.code}, but the edit succeeded`);
            equal(got.error.code, expected.error.code, `${what}: error code`);
            await expectUnchanged(fs, target, { bytes, version }, `${what}, refused`);
            return;
          }
          ok(got.ok, `${what}: expected success, got ${got.ok ? '' : `${got.error.code}: ${got.error.message}`}`);
          equal(got.value.replacements, expected.replacements, `${what}: replacements`);
          deepEqual(got.value.lines, expected.lines, `${what}: line ranges`);
          const after = await fs.readBytes(target, { maxBytes: 1 << 20 });
          bytesEqual(after.bytes, concatBytes(hadBom ? BOM : new Uint8Array(), utf8(expected.text)), `${what}: content`);
          equal(after.version as string, got.value.version, `${what}: version`);
        }),
        2,
      );
    },
  },
];
