import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import { FsTargetKey, createFs, type FsProvider } from '../../src/seam/index.js';
import { codeOf } from '../support/code-of.js';

/** The memory provider with a declared reserved pattern (its methods keep their own `this`). */
function reserving(pattern: RegExp, root?: string): FsProvider {
  const inner = createMemoryProvider({ files: { '/w/keep.txt': 'k\n', '/w/sub': null } });
  return Object.assign(Object.create(inner) as FsProvider, { reservedNames: pattern, ...(root ? { root } : {}) });
}

describe('reserved names are a seam rule', () => {
  it('refuses a reserved segment anywhere below the root, with FS_INVALID_ARGUMENT, and nothing else', async () => {
    const fs = createFs(reserving(/^\.res-[0-9]+$/), { cwd: '/w' });
    for (const path of ['.res-1', 'sub/.res-22', '.res-3/x.txt', '/w/sub/.res-4/y', 'a/../.res-5']) {
      expect(await codeOf(fs.resolve(path)), path).toBe('FS_INVALID_ARGUMENT');
    }
    for (const path of ['.res-', 'res-1', '.res-1x', 'sub/x.res-1', '.res-1/..']) {
      expect(await codeOf(fs.resolve(path)), path).toBe('ok');
    }
  });

  it('a global RegExp answers the same every time (no lastIndex carried over)', async () => {
    const fs = createFs(reserving(/^r$/g), { cwd: '/w' });
    for (let i = 0; i < 4; i++) expect(await codeOf(fs.resolve('r'))).toBe('FS_INVALID_ARGUMENT');
  });

  it('checks every target handed in, not only resolve', async () => {
    const fs = createFs(reserving(/^r$/), { cwd: '/w' });
    const forged = { targetKey: FsTargetKey('/w/r'), displayPath: '/w/r' };
    expect(await codeOf(fs.writeText(forged, 'x'))).toBe('FS_INVALID_ARGUMENT');
    expect(await codeOf(fs.stat(forged))).toBe('FS_INVALID_ARGUMENT');
    expect(await codeOf(fs.rename(await fs.resolve('keep.txt'), forged))).toBe('FS_INVALID_ARGUMENT');
    expect((await fs.readText(await fs.resolve('keep.txt'))).text).toBe('k\n');
  });

  it('only segments below the root count', async () => {
    const fs = createFs(reserving(/^w$/, '/w'), { cwd: '/w' });
    expect(await codeOf(fs.resolve('/w/keep.txt'))).toBe('ok');
    expect(await codeOf(fs.resolve('/w/sub/w'))).toBe('FS_INVALID_ARGUMENT');
  });

  it('a provider that declares something other than a RegExp is refused', () => {
    expect(() => createFs(Object.assign(Object.create(createMemoryProvider()) as FsProvider, { reservedNames: 'x' }))).toThrow(/RegExp/);
  });

  it('a path is refused exactly when one of its segments matches', async () => {
    const fs = createFs(reserving(/^x+$/), { cwd: '/w' });
    const segment = fc.constantFrom('x', 'xx', 'y', 'xy', 'sub', '.', '..');
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 5 }), async (segments) => {
        const canonical = segments.reduce<string[]>((acc, s) => (s === '.' ? acc : s === '..' ? acc.slice(0, -1) : [...acc, s]), []);
        const expected = canonical.some((s) => /^x+$/.test(s)) ? 'FS_INVALID_ARGUMENT' : 'ok';
        expect(await codeOf(fs.resolve(segments.join('/')))).toBe(expected);
      }),
    );
  });
});

describe('checkTargets (a directory shared by consecutive targets checked once)', () => {
  it('refuses exactly what checkTarget of each refuses, with the first refusal', async () => {
    const { createFsContext } = await import('../../src/seam/fs-context.js');
    const ctx = createFsContext(reserving(/^r$/, '/w'), { cwd: '/w' });
    const segment = fc.constantFrom('a', 'b', 'r', 'w');
    // Few directories, so that consecutive targets often share one.
    const dir = fc.constantFrom('/w', '/w/a', '/w/r', '/x', '/w/a/b');
    const key = fc.tuple(dir, fc.array(segment, { minLength: 1, maxLength: 2 })).map(([d, s]) => FsTargetKey(`${d}/${s.join('/')}`));
    fc.assert(
      fc.property(fc.array(key, { maxLength: 12 }), (keys) => {
        const targets = keys.map((k) => ({ targetKey: k, displayPath: k }));
        const one = (fn: () => void) => {
          try {
            fn();
            return 'ok';
          } catch (err) {
            return (err as Error).message;
          }
        };
        const each = targets.map((t) => one(() => ctx.checkTarget(t))).find((r) => r !== 'ok') ?? 'ok';
        expect(one(() => ctx.checkTargets(targets))).toBe(each);
      }),
      { numRuns: 500 },
    );
  });
});
