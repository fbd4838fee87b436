import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import { lookup, publicLookup, type CoreLookup } from '../../src/backends/memory/lookup.js';

/** What the provider reads of a lookup. */
const seen = (found: CoreLookup) =>
  found.ok
    ? { path: found.value.getPath() || '/', file: found.value.getNode().isFile(), dir: found.value.getNode().isDirectory(), size: found.value.getNode().getSize() }
    : { err: found.err.code };

describe('memory lookups', () => {
  it('through memfs public calls answer as through its core (property)', async () => {
    const segment = fc.constantFrom('a', 'b', 'l', 'loop', 'dangling', 'f.txt');
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((p) => `/${p.join('/')}`);
    await fc.assert(
      fc.property(fc.array(path, { maxLength: 8 }), fc.array(path, { minLength: 1, maxLength: 10 }), fc.boolean(), (files, probes, follow) => {
        const { volume } = createMemoryProvider({});
        for (const f of files) {
          try {
            volume.mkdirSync(f.slice(0, f.lastIndexOf('/')) || '/', { recursive: true });
            volume.writeFileSync(f, f);
          } catch {
            // a parent is a file: left out
          }
        }
        for (const [at, to] of [['/l', '/a'], ['/loop', '/loop'], ['/dangling', '/nowhere'], ['/a/l', '../b']]) {
          try {
            volume.symlinkSync(to!, at!);
          } catch {
            // the name is taken
          }
        }
        for (const p of probes) expect(seen(publicLookup(volume, p, follow)), `${p} follow=${follow}`).toEqual(seen(lookup({ vol: volume }, p, follow)));
      }),
      { numRuns: 150 },
    );
  });
});
