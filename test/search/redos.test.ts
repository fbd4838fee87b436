import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { FsError, compileSearchPattern, grep } from '../../src/seam/index.js';
import { nestedQuantifier, overlappingAlternation } from '../../src/seam/regex-safety.js';

describe('grep refuses patterns with nested repetition (catastrophic backtracking)', () => {
  it('flags a repeated group that itself repeats, and nothing else', () => {
    for (const bad of ['(a+)+$', '(a*)*', '(\\w+\\s?)*x', '((ab)+c)+', '(?:x{1,}y)+', '(a+){2,}', '(.*a){3,}']) {
      expect(nestedQuantifier(bad), bad).toBeDefined();
    }
    for (const ok of ['a+b*', '(foo|bar)+', '(ab)+', '[(a+)+]', '\\(a+\\)+', '(a+)?', '(a+){2}', 'x(a+)b', '(?:ab)*c+']) {
      expect(nestedQuantifier(ok), ok).toBeUndefined();
    }
  });

  it('a named regression — "(a+)+$" on a 31-character line — is refused with FS_INVALID_ARGUMENT before any file is read', async () => {
    expect(() => compileSearchPattern('(a+)+$')).toThrow(FsError);
    const fs = createMemoryFs({ files: { '/w/a.txt': `${'a'.repeat(31)}!\n` }, cwd: '/w' });
    await expect(grep(fs, '(a+)+$', { path: '/w' })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
  });
});

describe('grep refuses repeated choices whose alternatives can start alike (overlapping alternation)', () => {
  it('flags them, at any depth inside a repetition, and nothing else', () => {
    const bad: [string, string][] = [
      ['(a|a)*$', 'u'],
      ['(\\w|_)+', 'u'],
      ['(x|\\d|[a-z])*', 'u'],
      ['(?:(a|a)b)*', 'u'],
      ['(a?b|b)*', 'u'],
      ['(a|A)+', 'iu'],
      ['(.|\\n)*', 'su'],
      ['(\\d|\\p{Nd})+', 'u'],
      ['(ab|ac){2,}', 'u'],
      ['(\\1|a)*(b)', 'u'],
    ];
    for (const [source, flags] of bad) expect(overlappingAlternation(source, flags), `${source} /${flags}`).toBeDefined();
    const ok: [string, string][] = [
      ['(foo|bar)+', 'u'],
      ['(.|\\n)*', 'u'],
      ['(\\s|,)*', 'u'],
      ['(a|A)+', 'u'],
      ['(\\d|[^0-9])+', 'u'],
      ['(a|a)', 'u'],
      ['(ab|ac){2}', 'u'],
      ['((?=a)a|b)*', 'u'],
      ['(|a)*', 'u'],
      ['[(a|a)*]', 'u'],
      ['\\(a|a\\)*', 'u'],
    ];
    for (const [source, flags] of ok) expect(overlappingAlternation(source, flags), `${source} /${flags}`).toBeUndefined();
  });

  it('handles large alternations: thousands of distinct first characters pass, a shared one is found', () => {
    const distinct = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(0x4e00 + i));
    expect(overlappingAlternation(`(${distinct.join('|')})+`, 'u')).toBeUndefined();
    expect(overlappingAlternation(`(${distinct.join('|')}|${distinct[1234]}x)+`, 'u')).toBeDefined();
    expect(overlappingAlternation(`(${distinct.join('|')}|\\p{Script=Han})+`, 'u')).toBeDefined();
  });

  it('a named regression — "(a|a)*$" on a 31-character line — is refused with FS_INVALID_ARGUMENT before any file is read', async () => {
    expect(() => compileSearchPattern('(a|a)*$')).toThrow(/alternatives can start with the same character/);
    const fs = createMemoryFs({ files: { '/w/a.txt': `${'a'.repeat(31)}!\n` }, cwd: '/w' });
    await expect(grep(fs, '(a|a)*$', { path: '/w' })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
  });

  it('for single-atom alternatives, refuses exactly when two of them share a character (brute-force oracle)', () => {
    const ATOMS = ['a', 'b', 'A', '_', '1', '\\d', '\\w', '\\s', '\\S', '.', '\\n', '[a-c]', '[^a]', '[0-9_]', '\\p{L}', 'é', 'К'];
    const SAMPLE = [...Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)), 'é', 'É', 'К', 'к', '٣', '\u2028', '\u00a0'];
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom(...ATOMS), { minLength: 2, maxLength: 4 }), fc.constantFrom('u', 'iu', 'su'), (atoms, flags) => {
        const res = atoms.map((a) => new RegExp(`^(?:${a})$`, flags));
        const shared = SAMPLE.some((ch) => res.filter((r) => r.test(ch)).length > 1);
        expect(overlappingAlternation(`(${atoms.join('|')})*`, flags) !== undefined).toBe(shared);
      }),
    );
  });
});

describe('oversized glob patterns', () => {
  it('are argument errors (FS_INVALID_ARGUMENT), not I/O errors, for glob patterns and grep include', async () => {
    const { glob } = await import('../../src/seam/index.js');
    const fs = createMemoryFs({ files: { '/w/a.txt': 'x\n' }, cwd: '/w' });
    const huge = `${'a'.repeat(70_000)}*`;
    await expect(glob(fs, huge, { cwd: '/w' })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    await expect(grep(fs, 'x', { path: '/w', include: huge })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    expect((await glob(fs, '*.txt', { cwd: '/w' })).matches.map((m) => m.path)).toHaveLength(1);
  });
});
