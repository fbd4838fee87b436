import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PMap, PSet } from '../../src/backends/overlay/pmap.js';
import { RUNS } from './helpers.js';

// Few distinct keys, so sets, overwrites and deletes of one key meet often; many, so branches split.
const keyArb = fc.oneof(fc.constantFrom('/a', '/b', '/d/a', ''), fc.string({ maxLength: 3 }), fc.nat(5000).map((n) => `/f${n}`));
const opsArb = fc.array(fc.tuple(fc.boolean(), keyArb, fc.nat(3)), { maxLength: 300 });

describe('PMap', () => {
  it('behaves as a Map, and older versions keep their contents', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        let m = PMap.empty<number>();
        const ref = new Map<string, number>();
        const history: [PMap<number>, Map<string, number>][] = [];
        for (const [set, key, value] of ops) {
          if (set) (m = m.set(key, value)), ref.set(key, value);
          else (m = m.delete(key)), ref.delete(key);
          history.push([m, new Map(ref)]);
          expect(m.size).toBe(ref.size);
          expect(m.get(key)).toBe(ref.get(key));
        }
        for (const [map, want] of history) {
          expect(new Map(map)).toEqual(want);
          const seen = new Map<string, number>();
          map.forEach((v, k) => seen.set(k, v));
          expect(seen).toEqual(want);
          expect([...map.keys()].length).toBe(want.size);
        }
      }),
      { numRuns: RUNS * 3 },
    );
  });

  it('differences lists exactly the keys whose values differ', () => {
    fc.assert(
      fc.property(opsArb, opsArb, (common, more) => {
        let a = PMap.empty<number>();
        for (const [set, k, v] of common) a = set ? a.set(k, v) : a.delete(k);
        let b = a;
        for (const [set, k, v] of more) b = set ? b.set(k, v) : b.delete(k);
        const want = new Map<string, [number | undefined, number | undefined]>();
        for (const k of new Set([...a.keys(), ...b.keys()])) if (a.get(k) !== b.get(k)) want.set(k, [a.get(k), b.get(k)]);
        const got = new Map([...PMap.differences(a, b)].map(([k, x, y]) => [k, [x, y]]));
        expect(got).toEqual(want);
        const sa = PSet.from(a.keys());
        const sb = PSet.from(b.keys());
        const sides = new Map(PSet.differences(sa, sb));
        for (const k of new Set([...sa, ...sb])) expect(sides.get(k)).toBe(sa.has(k) === sb.has(k) ? undefined : sa.has(k) ? 'left' : 'right');
      }),
      { numRuns: RUNS * 3 },
    );
  });
});
