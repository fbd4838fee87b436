import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { FsVersion, contentHasher, contentVersion } from '../../src/seam/index.js';
import { isRacilyClean, type StatTuple } from '../../src/backends/local/index.js';
import { VersionCache } from '../../src/backends/local/version-cache.js';

const SEC = 1_000_000_000n;
const MS = 1_000_000n;
const v = (s: string) => FsVersion(`sha256:${s}`);

/** A fake clock and fake stat tuples: this kernel's nanosecond timestamps would hide the race. */
function setup(windowNs = 2n * SEC) {
  let now = 1_700_000_000n * SEC;
  const cache = new VersionCache({ now: () => now, racyWindowNs: windowNs });
  const advance = (ns: bigint) => (now += ns);
  const tuple = (over: Partial<StatTuple> = {}): StatTuple => ({
    dev: 1n,
    ino: 42n,
    size: 10n,
    mtimeNs: now,
    ctimeNs: now,
    ...over,
  });
  return { cache, advance, tuple, now: () => now };
}

describe('VersionCache (racy-clean rule)', () => {
  test('a same-size rewrite in the same timestamp tick is not hidden by the cache', () => {
    const { cache, tuple, advance } = setup();
    // Hashed in the same 4 ms tick in which the file was written: the tuple cannot prove anything.
    const t = tuple();
    advance(1n * MS);
    cache.record('/r/f', t, v('old'));
    // A coarse clock gives the rewrite the very same mtime/ctime/size: the tuple is identical.
    expect(cache.lookup('/r/f', { ...t })).toBeUndefined();
  });

  test('an entry recorded well after the last change is trusted for an identical tuple', () => {
    const { cache, tuple, advance } = setup();
    const t = tuple();
    advance(5n * SEC);
    cache.record('/r/f', t, v('a'));
    expect(cache.lookup('/r/f', t)).toBe(v('a'));
  });

  test('a racy entry becomes trusted once re-recorded later, never by the passage of time alone', () => {
    const { cache, tuple, advance } = setup();
    const t = tuple();
    cache.record('/r/f', t, v('a'));
    advance(60n * SEC);
    expect(cache.lookup('/r/f', t)).toBeUndefined();
    cache.record('/r/f', t, v('a'));
    expect(cache.lookup('/r/f', t)).toBe(v('a'));
  });

  test('a ctime that moved (touch -r restoring the mtime) is a miss', () => {
    const { cache, tuple, advance } = setup();
    const t = tuple();
    advance(10n * SEC);
    cache.record('/r/f', t, v('a'));
    expect(cache.lookup('/r/f', { ...t, ctimeNs: t.ctimeNs + 10n * SEC })).toBeUndefined();
  });

  test('timestamps in the future (clock skew) are never trusted', () => {
    const { cache, tuple } = setup();
    const t = tuple({ mtimeNs: 1_800_000_000n * SEC });
    cache.record('/r/f', t, v('a'));
    expect(cache.lookup('/r/f', t)).toBeUndefined();
  });

  test('property: a hit only for the identical tuple, recorded more than the window after both timestamps', () => {
    fc.assert(
      fc.property(
        fc.record({
          dev: fc.bigInt({ min: 0n, max: 3n }),
          ino: fc.bigInt({ min: 0n, max: 3n }),
          size: fc.bigInt({ min: 0n, max: 3n }),
          mtimeNs: fc.bigInt({ min: 0n, max: 10n * SEC }),
          ctimeNs: fc.bigInt({ min: 0n, max: 10n * SEC }),
        }),
        fc.record({
          dev: fc.bigInt({ min: 0n, max: 3n }),
          ino: fc.bigInt({ min: 0n, max: 3n }),
          size: fc.bigInt({ min: 0n, max: 3n }),
          mtimeNs: fc.bigInt({ min: 0n, max: 10n * SEC }),
          ctimeNs: fc.bigInt({ min: 0n, max: 10n * SEC }),
        }),
        fc.bigInt({ min: 0n, max: 15n * SEC }),
        fc.bigInt({ min: 0n, max: 3n * SEC }),
        (recorded, probed, recordedAt, windowNs) => {
          const cache = new VersionCache({ now: () => recordedAt, racyWindowNs: windowNs });
          cache.record('/k', recorded, v('x'));
          const same =
            recorded.dev === probed.dev &&
            recorded.ino === probed.ino &&
            recorded.size === probed.size &&
            recorded.mtimeNs === probed.mtimeNs &&
            recorded.ctimeNs === probed.ctimeNs;
          const trusted = recorded.mtimeNs + windowNs < recordedAt && recorded.ctimeNs + windowNs < recordedAt;
          expect(cache.lookup('/k', probed)).toBe(same && trusted ? v('x') : undefined);
          expect(isRacilyClean(recorded, recordedAt, windowNs)).toBe(!trusted);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('keys are independent and the cache is bounded', () => {
    let now = 100n * SEC;
    const cache = new VersionCache({ now: () => now, maxEntries: 3 });
    const t: StatTuple = { dev: 1n, ino: 1n, size: 1n, mtimeNs: SEC, ctimeNs: SEC };
    for (const k of ['a', 'b', 'c', 'd']) cache.record(k, t, v(k));
    now += SEC;
    expect(cache.size).toBe(3);
    expect(cache.lookup('a', t)).toBeUndefined();
    expect(cache.lookup('d', t)).toBe(v('d'));
    expect(cache.lookup('b', t)).toBe(v('b'));
    cache.delete('b');
    expect(cache.lookup('b', t)).toBeUndefined();
  });
});

describe('contentHasher (seam)', () => {
  test('hashing in chunks gives the same version as contentVersion of the whole', async () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 8 }), (chunks) => {
        const h = contentHasher();
        for (const c of chunks) h.update(c);
        expect(h.digest()).toBe(contentVersion(Buffer.concat(chunks)));
      }),
      { numRuns: 200 },
    );
  });
});
