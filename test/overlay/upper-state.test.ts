import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UpperState, type UpperChange, type UpperEntry } from '../../src/backends/overlay/state.js';
import { contentVersion } from '../../src/seam/index.js';
import { RUNS } from './helpers.js';
import { crashingStore, memoryDisk } from './stores.js';

const KEYS = ['/a', '/a/b', '/a/b/c', '/a/d', '/e', '/e/f', '/g/h/i'] as const;
const file = (text: string): UpperEntry => {
  // A fresh buffer every time, as writes give them.
  const bytes = new Uint8Array(Buffer.from(text));
  return { kind: 'file', bytes, version: contentVersion(bytes), mtimeMs: 0, base: undefined };
};

const changeArb: fc.Arbitrary<UpperChange> = fc.record({
  entries: fc.array(
    fc.tuple(
      fc.constantFrom(...KEYS),
      fc.oneof(
        fc.constantFrom('x', 'y', '').map(file),
        fc.constant<UpperEntry>({ kind: 'whiteout', base: undefined }),
        fc.constant(undefined),
      ),
    ),
    { maxLength: 3 },
  ),
  addDirs: fc.array(fc.constantFrom(...KEYS), { maxLength: 2 }),
  dropDirs: fc.array(fc.constantFrom(...KEYS), { maxLength: 2 }),
  addOpaque: fc.array(fc.constantFrom(...KEYS), { maxLength: 1 }),
  dropOpaque: fc.array(fc.constantFrom(...KEYS), { maxLength: 1 }),
});

/** The same questions, answered by scanning everything. */
function naive(state: UpperState, key: string) {
  const prefix = key === '/' ? '/' : `${key}/`;
  const files = [...state.entries].filter(([k, e]) => e.kind === 'file' && k.startsWith(prefix)).map(([k]) => k);
  const dirs = [...state.dirs].filter((d) => d.startsWith(prefix));
  const direct = [...state.entries.keys(), ...state.dirs, ...state.opaque].filter((k) => k !== '/' && posix.dirname(k) === key);
  return { descendant: files.length + dirs.length > 0, fileBelow: files.length > 0, child: direct.length > 0 };
}

describe('upper state', () => {
  it('its indexes answer as a scan would, and each content is held once, live and reopened', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(changeArb, { maxLength: 8 }), fc.boolean(), async (changes, persisted) => {
        const disk = memoryDisk();
        const store = persisted ? crashingStore(disk) : undefined;
        const state = await UpperState.open('/', store, { compactMinBytes: 0, compactRatio: 1 });
        for (const change of changes) await state.apply(change);
        const check = (s: UpperState) => {
          for (const key of ['/', '/a', '/a/b', '/e', '/g', '/g/h', ...KEYS]) {
            expect({ descendant: s.hasDescendant(key), fileBelow: s.hasFileBelow(key), child: s.hasChild(key) }, key).toEqual(naive(s, key));
          }
          const byVersion = new Map<string, Uint8Array>();
          for (const e of s.entries.values()) {
            if (e.kind !== 'file') continue;
            const held = byVersion.get(e.version);
            if (held) expect(e.bytes, `content ${e.version} is held twice`).toBe(held);
            else byVersion.set(e.version, e.bytes);
          }
        };
        check(state);
        if (store) check(await UpperState.open('/', crashingStore(disk)));
      }),
      { numRuns: RUNS * 2 },
    );
  });
});
