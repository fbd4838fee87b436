import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  comparePaths,
  compareNames,
  cutUtf8,
  isIgnored,
  parseGitignore,
  compileSearchPattern,
} from '../../src/index.js';
// The in-tree matcher is now the conformance kit's independent oracle (search matches with
// picomatch); these cases keep pinning the oracle. The search dialect is tested in dialect.test.ts.
import { globToRegExp, matchGlob } from '../../src/conformance/glob-oracle.js';

describe('the conformance oracle: globToRegExp / matchGlob', () => {
  const cases: [string, string, boolean][] = [
    ['*.ts', 'a.ts', true],
    ['*.ts', 'src/a.ts', false],
    ['*.ts', '.hidden.ts', true],
    ['**/*.ts', 'a.ts', true],
    ['**/*.ts', 'src/deep/a.ts', true],
    ['src/**', 'src/a/b', true],
    ['src/**', 'src', false],
    ['src/**', 'srcx', false],
    ['src/**/b', 'src/b', true],
    ['src/**/b', 'src/x/y/b', true],
    ['src/**/b', 'srcx/b', false],
    ['a?c', 'abc', true],
    ['a?c', 'a/c', false],
    ['[ab].txt', 'b.txt', true],
    ['[!ab].txt', 'c.txt', true],
    ['[!ab].txt', 'a.txt', false],
    ['[^ab].txt', 'a.txt', false],
    ['[a-c]', 'b', true],
    ['[a-c]', 'd', false],
    ['a[/]b', 'a/b', false],
    ['*.{ts,tsx}', 'x.tsx', true],
    ['*.{ts,tsx}', 'x.js', false],
    ['{a,b/{c,d}}/e', 'b/d/e', true],
    ['{a}', '{a}', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'axb', false],
    ['[unclosed', '[unclosed', true],
    ['a**b', 'axxb', true],
    ['a**b', 'a/b', false],
    ['(x)+$.^|', '(x)+$.^|', true],
    ['café-😀', 'café-😀', true],
    ['?', '😀', true],
  ];
  it.each(cases)('%s vs %s → %s', (glob, path, expected) => {
    expect(matchGlob(glob, path)).toBe(expected);
  });

  it('treats braces literally when asked (as .gitignore does)', () => {
    expect(matchGlob('{a,b}', 'a', { braces: false })).toBe(false);
    expect(matchGlob('{a,b}', '{a,b}', { braces: false })).toBe(true);
  });

  it('a literal name always matches itself, whatever its characters', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !s.includes('/')), (name) => {
        const escaped = name.replace(/[\\*?[\]{}]/g, '\\$&');
        expect(globToRegExp(escaped).test(name)).toBe(true);
        expect(globToRegExp(escaped).test(`${name}x`)).toBe(false);
      }),
    );
  });

  it('* never crosses a separator and ** spans any number of segments', () => {
    const seg = fc.stringMatching(/^[a-z.]{1,4}$/);
    fc.assert(
      fc.property(fc.array(seg, { minLength: 1, maxLength: 5 }), (segments) => {
        const path = segments.join('/');
        expect(matchGlob('*', path)).toBe(segments.length === 1);
        expect(matchGlob('**', path)).toBe(true);
        expect(matchGlob(`**/${segments.at(-1)}`, path)).toBe(true);
        expect(matchGlob(`${'*/'.repeat(segments.length - 1)}*`, path)).toBe(true);
      }),
    );
  });
});

describe('.gitignore rules', () => {
  const rules = parseGitignore(
    [
      '# comment',
      '',
      '*.log',
      '!keep.log',
      'build/',
      '/top.txt',
      'docs/*.md',
      '\\#hash',
      'trail   ',
      'a/**/z',
    ].join('\r\n'),
    '/repo',
  );

  it.each([
    ['/repo/x.log', false, true],
    ['/repo/deep/x.log', false, true],
    ['/repo/keep.log', false, false],
    ['/repo/build', true, true],
    ['/repo/build', false, false], // dir-only rule
    ['/repo/sub/build', true, true],
    ['/repo/top.txt', false, true],
    ['/repo/sub/top.txt', false, false], // anchored
    ['/repo/docs/a.md', false, true],
    ['/repo/docs/sub/a.md', false, false],
    ['/repo/#hash', false, true],
    ['/repo/trail', false, true],
    ['/repo/a/z', false, true],
    ['/repo/a/b/c/z', false, true],
    ['/repo/docs', true, false],
    ['/other/x.log', false, false], // outside the rule's directory
    ['/repo/comment', false, false],
  ] as const)('%s (dir %s) ignored: %s', (path, dir, expected) => {
    expect(isIgnored(rules, path, dir)).toBe(expected);
  });

  it('the last matching rule wins, deeper files after outer ones', () => {
    const outer = parseGitignore('*.txt\n', '/r');
    const inner = parseGitignore('!special.txt\n', '/r/sub');
    expect(isIgnored([...outer, ...inner], '/r/sub/special.txt', false)).toBe(false);
    expect(isIgnored([...outer, ...inner], '/r/special.txt', false)).toBe(true);
    expect(isIgnored([...inner, ...outer], '/r/sub/special.txt', false)).toBe(true);
  });
});

describe('comparePaths', () => {
  it('orders a/b before a-c (tree order, not string order)', () => {
    expect(comparePaths('/r/a/b', '/r/a-c')).toBeLessThan(0);
    expect(['/r/a-c', '/r/a.txt', '/r/a/b', '/r/a'].sort(comparePaths)).toEqual(['/r/a', '/r/a/b', '/r/a-c', '/r/a.txt']);
  });

  it('equals the order of a depth-first walk over name-sorted listings', () => {
    const name = fc.constantFrom('a', 'b', 'a-b', 'a.b', 'B', 'é', '😀', 'ａ');
    fc.assert(
      fc.property(fc.uniqueArray(fc.array(name, { minLength: 1, maxLength: 3 }).map((s) => s.join('/')), { maxLength: 12 }), (paths) => {
        // Build a tree, walk it depth-first with sorted names, and compare with the sort.
        type Node = Map<string, Node>;
        const root: Node = new Map();
        for (const p of paths) {
          let n = root;
          for (const s of p.split('/')) {
            if (!n.has(s)) n.set(s, new Map());
            n = n.get(s)!;
          }
        }
        const walked: string[] = [];
        const walk = (n: Node, prefix: string) => {
          for (const key of [...n.keys()].sort(compareNames)) {
            walked.push(prefix + key);
            walk(n.get(key)!, `${prefix}${key}/`);
          }
        };
        walk(root, '');
        const all = new Set(walked);
        expect([...all].sort(comparePaths)).toEqual(walked);
      }),
    );
  });
});

describe('cutUtf8', () => {
  it('keeps the longest prefix within the budget that ends on a character boundary', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.integer({ min: 1, max: 60 }), (text, max) => {
        const { text: out, cut } = cutUtf8(text, max);
        const bytes = Buffer.byteLength(out);
        expect(bytes).toBeLessThanOrEqual(max);
        expect(text.startsWith(out)).toBe(true);
        expect(out.isWellFormed()).toBe(true);
        expect(cut).toBe(out !== text);
        if (cut) {
          // One more code point would exceed the budget.
          const next = String.fromCodePoint(text.codePointAt(out.length)!);
          expect(bytes + Buffer.byteLength(next)).toBeGreaterThan(max);
        }
      }),
    );
  });

  it('cuts a multi-byte character out rather than splitting it', () => {
    expect(cutUtf8('ab€', 4)).toEqual({ text: 'ab', cut: true });
    expect(cutUtf8('😀😀', 7)).toEqual({ text: '😀', cut: true });
    expect(cutUtf8('abc', 3)).toEqual({ text: 'abc', cut: false });
  });
});

describe('compileSearchPattern', () => {
  it('turns a leading (?i) into the flag', () => {
    const re = compileSearchPattern('(?i)hello');
    expect(re.test('HeLLo')).toBe(true);
  });
  it('accepts legacy escapes that Unicode mode refuses', () => {
    expect(compileSearchPattern('a\\-b').test('a-b')).toBe(true);
    expect(compileSearchPattern('x{').test('x{')).toBe(true);
  });
  it('refuses an invalid expression with FS_INVALID_ARGUMENT', () => {
    expect(() => compileSearchPattern('(unclosed')).toThrowError(expect.objectContaining({ code: 'FS_INVALID_ARGUMENT' }));
  });
});

describe('compareNames', () => {
  // Names mixing ASCII, U+E000..U+FFFF, astral characters and lone surrogates: the cases where
  // UTF-16 unit order and code-point order differ.
  const unit = fc.constantFrom('a', 'b', '\uE000', '\uFFFD', '\uFFFF', '😀', '\u{10000}', '\uD800', '\uDC00', 'é');
  const name = fc.array(unit, { maxLength: 5 }).map((parts) => parts.join(''));

  it('orders as the UTF-8 bytes do (code points; a lone surrogate as U+FFFD)', () => {
    fc.assert(
      fc.property(name, name, (a, b) => {
        expect(compareNames(a, b)).toBe(Buffer.compare(Buffer.from(a), Buffer.from(b)));
      }),
      { numRuns: 2000 },
    );
  });
});
