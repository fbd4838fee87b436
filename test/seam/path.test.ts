import fc from 'fast-check';
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FsError, MAX_PATH_SEGMENTS, canonicalPath, isWithin } from '../../src/seam/index.js';

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof FsError ? e.code : 'RAW';
  }
  return undefined;
}

describe('P1 canonicalPath', () => {
  it('rejects non-strings, empty, NUL, backslashes and lone surrogates with FS_INVALID_ARGUMENT', () => {
    for (const bad of [undefined, null, 42, {}, [], '', 'a\0b', '\0', 'a\\b', '..\\x', 'a\uD800b']) {
      expect(code(() => canonicalPath(bad, '/w'))).toBe('FS_INVALID_ARGUMENT');
    }
  });

  it('resolves relative paths against cwd, never expands ~ or decodes %', () => {
    expect(canonicalPath('a/b', '/w')).toBe('/w/a/b');
    expect(canonicalPath('~/x', '/w')).toBe('/w/~/x');
    expect(canonicalPath('%2e%2e/x', '/w')).toBe('/w/%2e%2e/x');
    expect(canonicalPath('//etc/passwd', '/w')).toBe('/etc/passwd');
    expect(canonicalPath('a/./b/../c/', '/w')).toBe('/w/a/c');
    expect(canonicalPath('..foo', '/w')).toBe('/w/..foo');
  });

  it('always yields an absolute, normalised path with no "." or ".." segments', () => {
    const seg = fc.constantFrom('a', 'b', '.', '..', '', '...', '..a', 'é', ' ');
    fc.assert(
      fc.property(fc.array(seg, { minLength: 1, maxLength: 8 }), fc.boolean(), (segs, abs) => {
        const input = (abs ? '/' : '') + segs.join('/');
        fc.pre(input.length > 0);
        const out = canonicalPath(input, '/w/x');
        expect(out.startsWith('/')).toBe(true);
        expect(out.split('/').slice(1).some((s) => s === '.' || s === '..')).toBe(false);
        expect(posix.normalize(out)).toBe(out);
      }),
    );
  });
});

describe('isWithin', () => {
  it('uses a separator boundary', () => {
    expect(isWithin('/root', '/root')).toBe(true);
    expect(isWithin('/root', '/root/a')).toBe(true);
    expect(isWithin('/root', '/root-evil/a')).toBe(false);
    expect(isWithin('/root', '/rootevil')).toBe(false);
    expect(isWithin('/', '/anything')).toBe(true);
  });
});

describe('very long paths', () => {
  it('a path past MAX_PATH_SEGMENTS segments is FS_INVALID_ARGUMENT, on every provider, without recursion', async () => {
    const { createMemoryFs } = await import('../../src/backends/memory/index.js');
    const { createLocalFs } = await import('../../src/backends/local/index.js');
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(posix.join(tmpdir(), 'dsh-fs-long-'));
    try {
      const huge = `${'a/'.repeat(4_000_000)}x`;
      expect(code(() => canonicalPath(huge, '/w'))).toBe('FS_INVALID_ARGUMENT');
      expect(code(() => canonicalPath(`${'a/'.repeat(MAX_PATH_SEGMENTS)}x`, '/'))).toBe('FS_INVALID_ARGUMENT');
      expect(canonicalPath(`${'a/'.repeat(MAX_PATH_SEGMENTS - 1)}x`, '/')).toHaveLength(2 * MAX_PATH_SEGMENTS);
      // Collapsed first: many segments that cancel out are fine.
      expect(canonicalPath(`${'a/../'.repeat(1_000_000)}x`, '/w')).toBe('/w/x');
      for (const fs of [createMemoryFs({ files: { '/w': null }, cwd: '/w' }), createLocalFs({ root: dir })]) {
        for (const op of [() => fs.resolve(huge), () => fs.resolve(`/${huge}`)]) {
          const err = await op().then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(err).toBeInstanceOf(FsError);
          expect((err as FsError).code).toBe('FS_INVALID_ARGUMENT');
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

});
