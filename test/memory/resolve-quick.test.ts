import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plantTree } from './plant-tree.js';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import { canonicalPath, resolveLinks, type LinkReader } from '../../src/seam/index.js';

// The memory provider resolves a path whose directory resolves in one walk (its key is the
// directory's real path and the name) and takes longer ways where links or refusals are on it;
// every way must give what the seam's own segment-by-segment resolveLinks gives.

const NAMES = ['a', 'b', 'c'] as const;
const segment = fc.constantFrom(...NAMES, '..', '.');
const relPath = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/'));

const entry = fc.oneof(
  fc.record({ kind: fc.constant('dir' as const), mode: fc.constantFrom(0o755, 0o755, 0o644, 0o311) }),
  fc.record({ kind: fc.constant('file' as const) }),
  fc.record({ kind: fc.constant('link' as const), to: fc.oneof(relPath, relPath.map((p) => `/${p}`)) }),
);

/** A tree of at most three levels under /t, each entry one of a directory, a file or a link. */
const tree = fc.dictionary(fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((s) => s.join('/')), entry, { maxKeys: 10 });

describe('memory resolve', () => {
  it('equals resolveLinks over trees of directories, files, links and unsearchable directories (property)', async () => {
    await fc.assert(
      fc.asyncProperty(tree, fc.array(fc.constantFrom(...NAMES, '..'), { minLength: 1, maxLength: 5 }), async (entries, segments) => {
        const provider = createMemoryProvider({});
        const vol = provider.volume;
        plantTree(vol, entries);
        const reader: LinkReader = {
          kind(p) {
            let st;
            try {
              st = vol.lstatSync(p);
            } catch (err) {
              const code = (err as { code?: string }).code;
              if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
              throw err;
            }
            if (st.isSymbolicLink()) return 'link';
            return st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other';
          },
          readlink: (p) => String(vol.readlinkSync(p)),
        };
        // What the seam hands a provider: a canonical absolute path.
        const path = canonicalPath(`/t/${segments.join('/')}`, '/');
        const outcome = async (fn: () => Promise<string>) => {
          try {
            return `key ${await fn()}`;
          } catch (err) {
            return `refused ${(err as { code?: string }).code ?? String(err)}`;
          }
        };
        const ours = await outcome(async () => (await provider.resolve(path, {})).targetKey);
        const want = await outcome(() => resolveLinks(path, reader));
        expect(ours, path).toBe(want);
      }),
      { numRuns: 400 },
    );
  });
});
