import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { FsError, compileSearchPattern, grep } from '../../src/seam/index.js';
import { nestedQuantifier } from '../../src/seam/search.js';

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
