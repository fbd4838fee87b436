import fc from 'fast-check';
import { posix } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryFs, type MemoryEntry } from '../../src/backends/memory/index.js';
import { resolveLinks, type NodeKind } from '../../src/seam/index.js';

describe('memory provider: per-call cost', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('resolve asks the operating system for no uid or gid, and listDir for none per entry', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`);
    const fs = createMemoryFs({
      files: { '/a/b/c/small/one.txt': 'x', ...Object.fromEntries(names.map((n) => [`/a/b/c/big/${n}`, n])) },
    });
    const uid = vi.spyOn(process, 'getuid');
    const gid = vi.spyOn(process, 'getgid');
    await fs.resolve('/a/b/c/big/f00.txt');
    expect(uid).not.toHaveBeenCalled();
    expect(gid).not.toHaveBeenCalled();
    expect(await fs.listDir(await fs.resolve('/a/b/c/small'))).toHaveLength(1);
    const perListing = uid.mock.calls.length + gid.mock.calls.length;
    uid.mockClear();
    gid.mockClear();
    expect(await fs.listDir(await fs.resolve('/a/b/c/big'))).toHaveLength(30);
    expect(uid.mock.calls.length + gid.mock.calls.length).toBe(perListing);
  });

  it('listing a directory n levels deep looks up a number of paths that does not grow with n (regression: it was n)', async () => {
    const lookups = async (depth: number) => {
      const dir = `/${Array.from({ length: depth }, (_, i) => `d${i}`).join('/')}`;
      const fs = createMemoryFs({ files: { [`${dir}/f.txt`]: 'x' } });
      const target = await fs.resolve(dir);
      const vol = fs.provider.volume;
      const spies = [vi.spyOn(vol, 'lstatSync'), vi.spyOn(vol, 'statSync'), vi.spyOn(vol, 'realpathSync'), vi.spyOn(vol, 'readlinkSync')];
      expect(await fs.listDir(target)).toHaveLength(1);
      return spies.reduce((n, spy) => n + spy.mock.calls.length, 0);
    };
    expect(await lookups(80)).toBe(await lookups(2));
  });
});

const NAMES = ['a', 'b', 'c', 'd'] as const;
const DIRS = ['/w', '/w/x', '/w/x/y', '/v'] as const;

/** A small tree of files, directories and links (relative, absolute, dangling, chained, to directories). */
const treeArb = fc
  .array(
    fc.tuple(
      fc.constantFrom(...DIRS),
      fc.constantFrom(...NAMES),
      fc.oneof(
        fc.constant<MemoryEntry>('text'),
        fc.constant<MemoryEntry>(null),
        fc.constantFrom(...DIRS, '/w/x/a', '../a', 'b', '/missing', 'y').map((to): MemoryEntry => ({ symlink: to })),
      ),
    ),
    { maxLength: 14 },
  )
  .map((items) => {
    const files: Record<string, MemoryEntry> = {};
    for (const d of DIRS) files[d] = null;
    for (const [dir, name, entry] of items) {
      // A later entry must not sit under a path that is already a file or a link.
      if (Object.keys(files).some((p) => files[p] !== null && (dir === p || dir.startsWith(`${p}/`)))) continue;
      if (posix.join(dir, name) in files) continue;
      files[posix.join(dir, name)] = entry;
    }
    return files;
  });

describe('memory provider: listDir agrees with resolve and stat', () => {
  it('every entry has the target key resolve gives its path, and the type stat gives that key', async () => {
    await fc.assert(
      fc.asyncProperty(treeArb, fc.constantFrom(...DIRS), async (files, listed) => {
        const fs = createMemoryFs({ files });
        const entries = await fs.listDir(await fs.resolve(listed));
        for (const e of entries) {
          const path = posix.join(listed, e.name);
          const target = await fs.resolve(path).catch((err: { code?: string }) => err);
          if (!('targetKey' in target)) {
            // A link loop is listed as `other` under its own path, as resolving it fails.
            expect(target.code).toBe('FS_IO_ERROR');
            expect([e.type, e.target.targetKey]).toEqual(['other', path]);
            continue;
          }
          expect(e.target.targetKey).toBe(target.targetKey);
          const info = await fs.stat(target);
          expect(e.type).toBe(info?.type ?? 'other');
          if (e.type === 'file') expect(e.size).toBe(info?.size);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('a directory swapped for a link after it was resolved lists children under their real paths', async () => {
    const fs = createMemoryFs({ files: { '/real/d/f.txt': 'x', '/other/f.txt': 'y', '/other/g.txt': 'z' } });
    const stale = await fs.resolve('/real/d');
    const vol = fs.provider.volume;
    vol.renameSync('/real', '/moved');
    vol.symlinkSync('/other', '/real');
    // The key "/real/d" now leads through the link "/real" → "/other", which has no "d".
    vol.mkdirSync('/other/d');
    vol.writeFileSync('/other/d/h.txt', 'h');
    const entries = await fs.listDir(stale);
    expect(entries.map((e) => [e.name, e.target.targetKey])).toEqual([['h.txt', '/other/d/h.txt']]);
  });
});

describe('memory provider: resolve', () => {
  it('gives the key resolveLinks gives over lstat and readlink, or the same error', async () => {
    const paths = fc.constantFrom(...DIRS, '/', '/missing').chain((dir) =>
      fc.array(fc.constantFrom(...NAMES, 'z'), { maxLength: 3 }).map((rest) => posix.join(dir, ...rest)),
    );
    await fc.assert(
      fc.asyncProperty(treeArb, paths, async (files, path) => {
        const fs = createMemoryFs({ files });
        const vol = fs.provider.volume;
        const reader = {
          kind(p: string): NodeKind {
            let st;
            try {
              st = vol.lstatSync(p);
            } catch {
              return 'missing';
            }
            return st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other';
          },
          readlink: (p: string) => String(vol.readlinkSync(p)),
        };
        const expected = await resolveLinks(path, reader).then(
          (key) => ({ key }),
          (err: { code?: string }) => ({ code: err.code }),
        );
        const actual = await fs.resolve(path).then(
          (t) => ({ key: t.targetKey as string }),
          (err: { code?: string }) => ({ code: err.code }),
        );
        expect(actual).toEqual(expected);
      }),
      { numRuns: 400 },
    );
  });
});
