import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { compileGlob, glob, grep, isIgnored, matchGlob, parseGitignore } from '../../src/search/index.js';

/**
 * One dialect: glob's patterns, its `ignore` list and grep's `include` are the same picomatch
 * matcher (fast-glob's options, Unicode mode); `.gitignore` rules agree with it on `?`, classes
 * and negated classes.
 */

const NAMES = ['a', 'b', 'ab.md', 'x.ts', '😀.ts', '😀', 'é.ts', '.d', '.e.ts', '[a]', 'A.TS', 'a😀b.ts', 'ａ.ts'];
const PATTERNS = [
  '?.ts',
  '*.ts',
  '?',
  '[!a]*',
  '[^a]*',
  '{a,😀}*',
  '*.{ts,md}',
  '[a-z]*',
  '😀*',
  '[😀]*',
  '?😀?.ts',
  'a?b.ts',
  '\\[a]',
  '@(a|b)',
  '!(a)',
  '[[:alpha:]]*',
  '.*',
];

describe('glob, grep include and glob ignore agree', () => {
  it('on astral characters, brace sets, classes and negation', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1 }), fc.constantFrom(...PATTERNS), async (names, pattern) => {
        const fs = createMemoryFs({ cwd: '/p', files: Object.fromEntries(names.map((n) => [n, 'hit\n'])) });
        const globbed = (await glob(fs, pattern)).matches.map((m) => m.path.slice(3));
        const included = (await grep(fs, 'hit', { include: pattern, hidden: true, gitignore: false })).matches.map((m) => m.path.slice(3));
        const kept = new Set((await glob(fs, '**', { ignore: [pattern] })).matches.map((m) => m.path.slice(3)));
        const expected = names.filter((n) => matchGlob(pattern, n)).sort();
        expect(globbed.sort()).toEqual(expected);
        expect(included.sort()).toEqual(expected);
        expect(names.filter((n) => !kept.has(n)).sort()).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });

  it('? is one code point, [!a] and [^a] negate, braces expand', () => {
    expect(matchGlob('?.ts', '😀.ts')).toBe(true);
    expect(matchGlob('??.ts', '😀.ts')).toBe(false);
    expect(matchGlob('[!a].ts', 'b.ts')).toBe(true);
    expect(matchGlob('[!a].ts', 'a.ts')).toBe(false);
    expect(matchGlob('[^a].ts', 'a.ts')).toBe(false);
    expect(matchGlob('*.{ts,tsx}', 'a.tsx')).toBe(true);
    expect(matchGlob('{a,😀}/?.md', '😀/😀.md')).toBe(true);
    // A `?` inside braces keeps the leading-dot rule (picomatch alone loses it).
    expect(matchGlob('{?,zz}h', '.h', { dot: false })).toBe(false);
    expect(matchGlob('a\\-b', 'a-b')).toBe(true); // legacy escape: no Unicode mode for this one
    expect(() => compileGlob('x'.repeat(5000))).toThrow(/limit/);
  });
});

describe('.gitignore through the ignore package', () => {
  it('a directory rule hides its contents even after a negation, as git does', () => {
    const rules = parseGitignore('dir/\n!dir/keep\n', '/r');
    expect(isIgnored(rules, '/r/dir/keep', false)).toBe(true);
    expect(isIgnored(rules, '/r/dir', true)).toBe(true);
    expect(isIgnored(rules, '/r/other', false)).toBe(false);
  });

  it('agrees with the glob dialect on ?, classes and negated classes', () => {
    for (const pattern of ['?.ts', '[!a].ts', '[a-z].ts', '😀?.ts']) {
      const rules = parseGitignore(`${pattern}\n`, '/r');
      for (const name of ['😀.ts', 'a.ts', 'b.ts', '😀😀.ts', '😀b.ts', 'ab.ts', 'é.ts']) {
        expect(isIgnored(rules, `/r/${name}`, false), `${pattern} vs ${name}`).toBe(matchGlob(pattern, name));
      }
    }
  });

  it('grep skips what a .gitignore with an astral ? names', async () => {
    const fs = createMemoryFs({ cwd: '/p', files: { '.gitignore': '?.ts\n', '😀.ts': 'hit\n', 'ab.ts': 'hit\n', '-x.ts': 'hit\n' } });
    expect((await grep(fs, 'hit')).matches.map((m) => m.path)).toEqual(['/p/-x.ts', '/p/ab.ts']);
    const fs2 = createMemoryFs({ cwd: '/p', files: { '.gitignore': '-*\n', '-x.ts': 'hit\n', '-d/y.ts': 'hit\n', 'z.ts': 'hit\n' } });
    expect((await grep(fs2, 'hit')).matches.map((m) => m.path)).toEqual(['/p/z.ts']);
  });
});
