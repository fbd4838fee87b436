import fc from 'fast-check';
import { vol as globalVolume } from 'memfs';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';

describe('memory provider', () => {
  it('seeds from a flat JSON tree; relative keys resolve against cwd, never process.cwd()', async () => {
    const fs = createMemoryFs({
      cwd: '/proj',
      files: { 'src/a.ts': 'export {};\n', '/etc/conf': new Uint8Array([1, 2, 3]), empty: null, 'link.ts': { symlink: 'src/a.ts' } },
    });
    expect((await fs.readText(await fs.resolve('src/a.ts'))).text).toBe('export {};\n');
    expect((await fs.readBytes(await fs.resolve('/etc/conf'), { maxBytes: 3 })).bytes).toEqual(new Uint8Array([1, 2, 3]));
    expect((await fs.stat(await fs.resolve('empty')))?.type).toBe('directory');
    expect((await fs.resolve('link.ts')).targetKey).toBe((await fs.resolve('/proj/src/a.ts')).targetKey);
    expect(fs.provider.volume.existsSync(`${process.cwd()}/src/a.ts`.replace(/^\/proj/, '/nowhere'))).toBe(false);
    expect(Object.keys(globalVolume.toJSON())).toEqual([]);
  });

  it('instances are isolated', async () => {
    const a = createMemoryFs();
    const b = createMemoryFs();
    await a.writeText(await a.resolve('/x.txt'), 'a');
    expect(await b.stat(await b.resolve('/x.txt'))).toBeUndefined();
  });

  it('snapshot/restore round-trips files, directories, symlinks and bytes', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.stringMatching(/^[a-z]{1,3}$/), fc.oneof(fc.string(), fc.uint8Array({ maxLength: 8 }))),
        (files) => {
          const tree = Object.fromEntries(Object.entries(files).map(([k, v]) => [`/d/${k}.f`, v]));
          const fs = createMemoryFs({ files: { ...tree, '/d/link': { symlink: '/d' }, '/e': null } });
          const snap = fs.snapshot();
          const other = createMemoryFs();
          other.restore(snap);
          expect(other.snapshot()).toEqual(snap);
          for (const [path, value] of Object.entries(tree)) {
            const expected = typeof value === 'string' ? new Uint8Array(Buffer.from(value)) : value;
            expect(snap[path]).toEqual(expected);
          }
          expect(snap['/d/link']).toEqual({ symlink: '/d' });
        },
      ),
      { numRuns: 50 },
    );
  });

  it('restore replaces the whole state; later writes do not leak into an earlier snapshot', async () => {
    const fs = createMemoryFs({ files: { '/a.txt': 'one' } });
    const snap = fs.snapshot();
    const a = await fs.resolve('/a.txt');
    await fs.writeText(a, 'two');
    await fs.writeText(await fs.resolve('/b.txt'), 'new');
    expect(snap['/a.txt']).toEqual(new Uint8Array(Buffer.from('one')));
    fs.restore(snap);
    expect((await fs.readText(a)).text).toBe('one');
    expect(await fs.stat(await fs.resolve('/b.txt'))).toBeUndefined();
  });

  it('versions come from content: same bytes in the same millisecond, same version; different bytes differ', async () => {
    const fs = createMemoryFs();
    const t = await fs.resolve('/v.txt');
    const v1 = (await fs.writeText(t, 'abc')).version;
    const v2 = (await fs.writeText(t, 'abd')).version;
    const v3 = (await fs.writeText(t, 'abc')).version;
    expect(v2).not.toBe(v1);
    expect(v3).toBe(v1);
    // chmod bumps memfs mtime; the version must not move.
    fs.provider.volume.chmodSync('/v.txt', 0o600);
    expect((await fs.stat(t))?.version).toBe(v1);
  });
});

describe('a provider that never waits for I/O still lets timers run', () => {
  it('an AbortSignal.timeout fires during a long run of calls, and the next call is aborted', async () => {
    const fs = createMemoryFs({ files: { '/w/a.txt': 'x' }, cwd: '/w' });
    const target = await fs.resolve('a.txt');
    const signal = AbortSignal.timeout(5);
    let calls = 0;
    // Without yielding, the timer could not fire before the loop ran out.
    const err = await (async () => {
      for (; calls < 200_000; calls++) await fs.stat(target, { signal });
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'FS_ABORTED' });
    expect(calls).toBeLessThan(200_000);
  });

  it('a grep over a large tree is aborted by its timeout', async () => {
    const { grep } = await import('../../src/index.js');
    const files: Record<string, string> = {};
    for (let i = 0; i < 400; i++) files[`/w/d${i % 20}/f${i}.txt`] = 'no match here\n'.repeat(2000);
    const fs = createMemoryFs({ files, cwd: '/w' });
    const err = await grep(fs, 'absent', { signal: AbortSignal.timeout(5) }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'FS_ABORTED' });
  });
});
