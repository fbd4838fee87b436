import { posix } from 'node:path';
import fc from 'fast-check';
import { glob, grep } from '../../search/index.js';
import { comparePaths, isIgnored, matchGlob, parseGitignore } from '../glob-oracle.js';
import type { FileSystem } from '../../seam/index.js';
import { deepEqual, equal, isFsErrorLike, ok, utf8, type Rule, type RuleContext } from '../harness.js';
import { plainDecode } from '../reference.js';

/**
 * S1/S2: glob and grep are seam functions over the contract, so they must agree with what the
 * provider stores: the files the suite wrote (some behind the seam, some removed through it, so
 * an overlay's whiteouts and lower files are both in play), filtered by an independent glob
 * matcher, and a line-by-line scan of the same bytes.
 */

const NAMES = ['a', 'b', 'c.ts', 'd.md', 'A', '.h', 'é', '😀.ts', 'ﬀ'] as const;

type Tree = readonly (readonly [path: string, bytes: Uint8Array])[];

/** Relative paths 1–3 segments deep; none is both a file and a directory. */
function treeArb(content: fc.Arbitrary<Uint8Array>, maxLength = 10): fc.Arbitrary<Tree> {
  return fc
    .uniqueArray(fc.tuple(fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((s) => s.join('/')), content), {
      selector: ([p]) => p,
      maxLength,
    })
    .map((entries) => entries.filter(([p]) => !entries.some(([q]) => q.startsWith(`${p}/`))));
}

/** How each file gets there: through the seam, or behind it (when the subject can). */
const placementArb = fc.array(fc.boolean(), { minLength: 12, maxLength: 12 });
/** Which files are then removed through the seam. */
const removalArb = fc.array(fc.boolean(), { minLength: 12, maxLength: 12 });

async function populate(ctx: RuleContext, dir: string, tree: Tree, behind: readonly boolean[], removed: readonly boolean[]): Promise<Tree> {
  const { fs } = ctx;
  const oob = ctx.subject.outOfBand;
  for (const [i, [rel, bytes]] of tree.entries()) {
    const path = `${dir}/${rel}`;
    if (oob && behind[i]) await oob.writeBytes(path, bytes);
    else await fs.writeBytes(await fs.resolve(path), bytes);
  }
  const kept: (readonly [string, Uint8Array])[] = [];
  for (const [i, entry] of tree.entries()) {
    if (removed[i]) await fs.remove(await fs.resolve(`${dir}/${entry[0]}`));
    else kept.push(entry);
  }
  return kept;
}

/** Every file under `dir` through listDir alone, as sorted relative paths. */
async function walkFiles(fs: FileSystem, dir: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (abs: string, rel: string) => {
    for (const entry of await fs.listDir(await fs.resolve(abs))) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.type === 'directory') await visit(posix.join(abs, entry.name), childRel);
      else if (entry.type === 'file') out.push(childRel);
    }
  };
  await visit(dir, '');
  return out.sort(comparePaths);
}

const PIECES = ['*', '**', 'a', 'b', '*.ts', '?', '[ab]', '{a,c.ts}', '.h', 'A*', '*.{md,ts}', '[!a]*', '?.ts'] as const;
const patternArb = fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 3 }).map((s) => s.join('/'));
/** A `.gitignore` for glob's default: plain rules, directory rules, anchors and negations. */
const ignoreTextArb = fc
  .array(fc.constantFrom('*.ts', 'a/', 'b', '!b', '*.md', 'A*', '!a', '/b', '**/a', '?', '[ab]', '!*.ts'), { maxLength: 3 })
  .map((lines) => lines.join('\n'));

/** Whether git ignores the file `rel` below `dir` under one `.gitignore` in `dir`: an ignored directory hides all below it. */
function oracleIgnores(dir: string, text: string, rel: string): boolean {
  const rules = parseGitignore(text, dir);
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) if (isIgnored(rules, `${dir}/${parts.slice(0, i).join('/')}`, true)) return true;
  return isIgnored(rules, `${dir}/${rel}`, false);
}

const textContentArb: fc.Arbitrary<Uint8Array> = fc
  .tuple(
    fc.array(fc.array(fc.constantFrom('foo', 'bar', ' ', 'x', 'é', '\r', 'Foo', '😀', '$'), { maxLength: 4 }).map((w) => w.join('')), {
      maxLength: 6,
    }),
    fc.constantFrom('\n', '\r\n'),
    fc.boolean(),
    fc.boolean(),
  )
  .map(([lines, eol, bom, final]) => utf8(`${bom ? '\uFEFF' : ''}${lines.join(eol)}${final && lines.length > 0 ? eol : ''}`));

const contentArb: fc.Arbitrary<Uint8Array> = fc.oneof(
  { weight: 6, arbitrary: textContentArb },
  { weight: 1, arbitrary: fc.constant(new Uint8Array([0x66, 0x6f, 0x6f, 0x00, 0x0a])) },
  { weight: 1, arbitrary: fc.constant(new Uint8Array([0x66, 0x6f, 0x6f, 0xff, 0x0a])) },
);

const REGEXES = ['foo', '^foo', 'o$', '^$', 'x|é', '(?i)foo', '\\r', 'a.?r', '😀', '\\$'] as const;

/**
 * The naive scan: every line (LF-split, the CR of a CRLF dropped, a lone CR kept, even at the end
 * of the file, as `read` shows it; BOM not part of line 1) that matches.
 */
function naiveScan(files: readonly (readonly [string, string])[], pattern: string): [string, number, string][] {
  const re = pattern.startsWith('(?i)') ? new RegExp(pattern.slice(4), 'iu') : new RegExp(pattern, 'u');
  const out: [string, number, string][] = [];
  for (const [path, text] of [...files].sort(([a], [b]) => comparePaths(a, b))) {
    const lines = text.split('\n');
    const broken = lines.length - 1;
    if (lines.at(-1) === '') lines.pop();
    lines.forEach((raw, i) => {
      const line = i < broken && raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (re.test(line)) out.push([path, i + 1, line]);
    });
  }
  return out;
}

export const searchRules: Rule[] = [
  {
    id: 'S1',
    title: 'glob equals a filtered walk',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('hidden names, nested directories, static patterns, dot: false', async () => {
        const dir = ctx.dir();
        for (const rel of ['a.ts', '.env', 'src/b.ts', 'src/.cache/c.ts', 'src/deep/d.md']) {
          await fs.writeText(await fs.resolve(`${dir}/${rel}`), rel);
        }
        const rel = async (pattern: string, options: { dot?: boolean } = {}) =>
          (await glob(fs, pattern, { cwd: dir, ...options })).matches.map((m) => posix.relative(dir, m.path));
        deepEqual(await rel('**/*.ts'), ['a.ts', 'src/.cache/c.ts', 'src/b.ts'], 'glob("**/*.ts")');
        deepEqual(await rel('**/*.ts', { dot: false }), ['a.ts', 'src/b.ts'], 'glob("**/*.ts", { dot: false })');
        deepEqual(await rel('*'), ['.env', 'a.ts'], 'glob("*")');
        deepEqual(await rel('src/deep/d.md'), ['src/deep/d.md'], 'a static pattern');
        deepEqual(await rel('src/missing.md'), [], 'a static pattern that matches nothing');
        const found = (await glob(fs, 'src/b.ts', { cwd: dir })).matches[0];
        ok(found !== undefined && found.type === 'file' && found.size === utf8('src/b.ts').byteLength, 'a match reports type file and its size');
      });
      if (ctx.subject.capabilities?.symlinks && ctx.subject.setup?.symlink) {
        const symlink = ctx.subject.setup.symlink.bind(ctx.subject.setup);
        await ctx.example('a symlink to an ancestor does not make the walk loop', async () => {
          const dir = ctx.dir();
          await fs.writeText(await fs.resolve(`${dir}/sub/f.txt`), 'x');
          await symlink('..', `${dir}/sub/up`);
          const r = await glob(fs, '**', { cwd: dir });
          deepEqual(r.matches.map((m) => posix.relative(dir, m.path)), ['sub/f.txt'], 'glob("**") over a tree with a link to its parent');
          equal(r.skippedCounts.loops, 1, 'the looping link is reported');
        });
      }
      await ctx.check(
        'random trees (some files behind the seam, some removed) and patterns',
        fc.asyncProperty(treeArb(fc.constant(utf8('x'))), placementArb, removalArb, patternArb, ignoreTextArb, async (tree, behind, removed, pattern, ignoreText) => {
          // fast-glob's own patterns disagree on whether `x/**` (or `x/**/**`) matches a file `x` itself.
          const stem = pattern.replace(/(\/\*\*)+$/, '');
          if (stem !== pattern) fc.pre(!tree.some(([p]) => matchGlob(stem, p)));
          // fast-glob's `?` is one UTF-16 unit, so it never matches an astral character.
          if (pattern.includes('?')) fc.pre(!tree.some(([p]) => /[\u{10000}-\u{10FFFF}]/u.test(p)));
          fc.pre(!tree.some(([p]) => p.split('/').includes('.gitignore')));
          const dir = ctx.dir();
          await fs.writeText(await fs.resolve(`${dir}/.keep`), 'x');
          await fs.writeText(await fs.resolve(`${dir}/.gitignore`), ignoreText);
          const kept = [...(await populate(ctx, dir, tree, behind, removed)).map(([p]) => p), '.keep', '.gitignore'];
          const walked = await walkFiles(fs, dir);
          deepEqual(walked, [...kept].sort(comparePaths), 'a listDir walk gives exactly the files written and not removed');
          const matched = walked.filter((p) => matchGlob(pattern, p));
          const expected = matched.filter((p) => !oracleIgnores(dir, ignoreText, p));
          const r = await glob(fs, pattern, { cwd: dir });
          deepEqual(
            r.matches.map((m) => posix.relative(dir, m.path)),
            expected,
            `glob(${JSON.stringify(pattern)}) against the walk filtered by the pattern and a .gitignore of ${JSON.stringify(ignoreText)}`,
          );
          equal(r.ignored, matched.length - expected.length, 'glob counts the matches the .gitignore left out');
          equal(r.truncated, false, 'glob did not stop early');
          ok(r.matches.every((m) => m.type === 'file' && (m.size === 1 || m.path.endsWith('/.gitignore'))), 'every match is a file of the size written');
          const all = await glob(fs, pattern, { cwd: dir, gitignore: false });
          deepEqual(all.matches.map((m) => posix.relative(dir, m.path)), matched, 'glob with gitignore: false against the walk filtered by the pattern');
        }),
        0.5,
      );
    },
  },
  {
    id: 'S2',
    title: 'grep equals a naive scan',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('default filters: .gitignore, hidden names, binary files, VCS directories, include', async () => {
        const dir = ctx.dir();
        const files: [string, string | Uint8Array][] = [
          ['.gitignore', 'gen/\n*.log\n'],
          ['a.ts', 'one\r\nfoo two\r\n'],
          ['gen/b.ts', 'foo'],
          ['x.log', 'foo'],
          ['.hidden', 'foo'],
          ['.git/config', 'foo'],
          ['bin.dat', new Uint8Array([0x66, 0x6f, 0x6f, 0])],
          ['src/c.md', '\uFEFFfoo\nfoo'],
        ];
        for (const [rel, content] of files) {
          const target = await fs.resolve(`${dir}/${rel}`);
          await fs.writeBytes(target, typeof content === 'string' ? utf8(content) : content);
        }
        const hits = async (options: { include?: string; path?: string } = {}) =>
          (await grep(fs, 'foo', { path: dir, ...options })).matches.map((m) => `${posix.relative(dir, m.path)}:${m.line}:${m.text}`);
        deepEqual(await hits(), ['a.ts:2:foo two', 'src/c.md:1:foo', 'src/c.md:2:foo'], 'grep("foo") with the default filters');
        deepEqual(await hits({ include: '*.md' }), ['src/c.md:1:foo', 'src/c.md:2:foo'], 'grep("foo", include "*.md")');
        deepEqual(await hits({ path: `${dir}/x.log` }), ['x.log:1:foo'], 'grep on an ignored file named directly');
        const all = await grep(fs, 'foo', { path: dir, hidden: true, gitignore: false });
        deepEqual(
          [...new Set(all.matches.map((m) => posix.relative(dir, m.path)))],
          ['.hidden', 'a.ts', 'gen/b.ts', 'src/c.md', 'x.log'],
          'grep with hidden: true, gitignore: false (VCS directories still skipped)',
        );
        equal(all.skippedCounts.binary, 1, 'the binary file is counted as skipped');
      });
      await ctx.check(
        'random trees (text with CRLF and BOM, binary and invalid UTF-8 files; some behind the seam, some removed)',
        fc.asyncProperty(
          treeArb(contentArb),
          placementArb,
          removalArb,
          fc.constantFrom(...REGEXES),
          fc.integer({ min: 1, max: 40 }),
          async (tree, behind, removed, pattern, maxMatches) => {
            const dir = ctx.dir();
            await fs.writeText(await fs.resolve(`${dir}/.keep`), '');
            const kept = await populate(ctx, dir, tree, behind, removed);
            // Decoded by the kit's own restatement of T1, not by the seam under test.
            const texts = kept.flatMap(([p, bytes]) => {
              const text = plainDecode(bytes);
              return text === undefined ? [] : [[p, text] as const];
            });
            const expected = naiveScan(texts, pattern);

            // The same scan through the contract: listDir walk, readText each file.
            const listed = await walkFiles(fs, dir);
            deepEqual(listed, ['.keep', ...kept.map(([p]) => p)].sort(comparePaths), 'listDir, directory by directory, finds every file written and kept');
            const viaContract: (readonly [string, string])[] = [];
            for (const rel of listed) {
              try {
                viaContract.push([rel, (await fs.readText(await fs.resolve(`${dir}/${rel}`))).text]);
              } catch (err) {
                if (!isFsErrorLike(err) || err.code !== 'FS_NOT_TEXT') throw err;
              }
            }
            deepEqual(naiveScan(viaContract, pattern), expected, 'a naive scan through listDir and readText agrees with the bytes written');

            const r = await grep(fs, pattern, { path: dir, hidden: true, gitignore: false, maxMatches });
            deepEqual(
              r.matches.map((m) => [posix.relative(dir, m.path), m.line, m.text]),
              expected.slice(0, maxMatches),
              `grep(${JSON.stringify(pattern)}, maxMatches ${maxMatches}) against the naive scan`,
            );
            equal(r.truncated, expected.length > maxMatches ? 'matches' : false, 'grep says whether matches were left out');
            if (r.truncated === false) {
              const binary = kept.filter(([, bytes]) => plainDecode(bytes) === undefined).length;
              equal(r.skippedCounts.binary, binary, 'every non-text file is counted as skipped');
            }
          },
        ),
        0.5,
      );
    },
  },
];
