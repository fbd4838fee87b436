import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { FsError, compileSearchPattern, grep } from '../../src/index.js';
import { nestedQuantifier, overlappingAlternation } from '../../src/search/regex-safety.js';
import { withoutRepetition } from '../../src/search/regex-worker.js';

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
    const { glob } = await import('../../src/index.js');
    const fs = createMemoryFs({ files: { '/w/a.txt': 'x\n' }, cwd: '/w' });
    const huge = `${'a'.repeat(70_000)}*`;
    await expect(glob(fs, huge, { cwd: '/w' })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    await expect(grep(fs, 'x', { path: '/w', include: huge })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    expect((await glob(fs, '*.txt', { cwd: '/w' })).matches.map((m) => m.path)).toHaveLength(1);
  });
});

describe("grep runs every pattern in bounded time, off the caller's event loop", () => {
  // Concatenated stars pass the static checks but backtrack polynomially: this one took over 25 s
  // on one 400-character line when it ran on the event loop.
  const SLOW = '.*.*.*.*.*.*.*=';
  const files = { '/w/a.txt': 'ok=1\n', '/w/b.txt': `${'a'.repeat(400)}\n`, '/w/c.txt': 'x=2\n' };

  it('a pattern that runs past the deadline fails with FS_TIMEOUT naming the file and how to narrow it', async () => {
    const fs = createMemoryFs({ files, cwd: '/w' });
    const err = await grep(fs, SLOW, { path: '/w', matchTimeoutMs: 1_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FsError);
    expect((err as FsError).code).toBe('FS_TIMEOUT');
    expect((err as FsError).message).toMatch(/took longer than 1000 ms on "\/w\/b\.txt" \(from line 1\).*Narrow it/s);
    // The same pattern on text it handles quickly still works.
    const quick = await grep(fs, SLOW, { path: '/w/a.txt', matchTimeoutMs: 60_000 });
    expect(quick.matches.map((m) => m.text)).toEqual(['ok=1']);
  });

  it('other calls go on while it runs, and an abort stops it at once', async () => {
    const fs = createMemoryFs({ files, cwd: '/w' });
    const controller = new AbortController();
    const events: string[] = [];
    const slow = grep(fs, SLOW, { path: '/w', signal: controller.signal, matchTimeoutMs: 600_000 }).then(
      () => events.push('grep ok'),
      (e: FsError) => events.push(`grep ${e.code}`),
    );
    // Timers fire and other operations complete while the match is running in the worker.
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 20));
      events.push(`read ${(await fs.readText(await fs.resolve('a.txt'))).text.trim()}`);
    }
    controller.abort();
    await slow;
    expect(events).toEqual([...Array(5).fill('read ok=1'), 'grep FS_ABORTED']);
  });

  it('the grep tool turns the timeout into an error result that says how to narrow the pattern', async () => {
    const { createHarness } = await import('../../src/harness/index.js');
    const { searchTools } = await import('../../src/tools/index.js');
    const fs = createMemoryFs({ files, cwd: '/w' });
    const ctx = createHarness({ fs, plugins: [searchTools({ grepMatchTimeoutMs: 1_000 })] });
    const r = await ctx.tools.execute('grep', { pattern: SLOW }, { owner: 'agent' });
    expect(r.isError).toBe(true);
    expect(r.error).toEqual({ name: 'FsError', code: 'FS_TIMEOUT' });
    expect(r.text).toMatch(/^Error: grep stopped: the pattern .* took longer than 1000 ms on .*Narrow it/s);
  });
});

describe('patterns without repetition are matched on the caller\'s thread', () => {
  it('withoutRepetition tells quantified patterns from plain ones', () => {
    for (const plain of ['needle', 'a.c', '\\bfoo\\b', '(?:ab|cd)e', '(?<n>x)\\k<n>', '[*+?{]', '\\*\\+\\?\\{', '^x$', '(?=a)b', '(?<!a)b']) {
      expect(withoutRepetition(plain), plain).toBe(true);
    }
    for (const quantified of ['a*', 'a+', 'a?', 'a{2}', 'a{2,}', '\\(?', '(a)?', '[x]*', '(?:a|b)+', 'x{', '.*.*=']) {
      expect(withoutRepetition(quantified), quantified).toBe(false);
    }
  });

  it('grep finds the same lines either way (a plain pattern and its one-quantifier twin)', async () => {
    const fs = createMemoryFs({ cwd: '/w', files: { 'a.txt': 'one needle\r\nneedle\rx\nno\n\uFEFFneedle', 'b.txt': 'needle\n' } });
    const plain = await grep(fs, /needle/, { path: '/w' });
    const quantified = await grep(fs, /needl{1}e/, { path: '/w' });
    expect(plain.matches.map((m) => [m.path, m.line, m.text])).toEqual(quantified.matches.map((m) => [m.path, m.line, m.text]));
    expect(plain.matches.length).toBe(4);
  });
});
