import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FsTargetKey } from '../../src/seam/index.js';
import { statOf } from '../../src/mount/attrs.js';
import { AttrCache } from '../../src/mount/cache.js';

const key = (p: string) => FsTargetKey(p);
const stat = (size: number) => statOf('file', size, 7, 0);

describe('AttrCache', () => {
  it('keeps nothing when the kernel caches nothing', () => {
    const cache = new AttrCache(0);
    cache.set('/a', key('/a'), stat(1));
    expect(cache.enabled).toBe(false);
    expect(cache.get('/a')).toBeUndefined();
  });

  it('answers until the entry expires', () => {
    let now = 1000;
    const cache = new AttrCache(500, () => now);
    cache.set('/a', key('/a'), stat(3));
    now = 1499;
    expect(cache.get('/a')?.stat.size).toBe(3);
    now = 1500;
    expect(cache.get('/a')).toBeUndefined();
  });

  it('drops a changed path and its directory, not its siblings', () => {
    const cache = new AttrCache(1000, () => 0);
    for (const p of ['/d', '/d/a', '/d/b']) cache.set(p, key(p), stat(1));
    cache.forget('/d/a');
    expect(cache.get('/d/a')).toBeUndefined();
    expect(cache.get('/d')).toBeUndefined();
    expect(cache.get('/d/b')).toBeDefined();
  });

  it('drops everything below a removed or renamed directory, and nothing with a longer name', () => {
    const cache = new AttrCache(1000, () => 0);
    for (const p of ['/d', '/d/x', '/d/x/y', '/dx']) cache.set(p, key(p), stat(1));
    cache.forgetTree('/d');
    expect(cache.get('/d')).toBeUndefined();
    expect(cache.get('/d/x')).toBeUndefined();
    expect(cache.get('/d/x/y')).toBeUndefined();
    expect(cache.get('/dx')).toBeDefined();
  });
});

describe('AttrCache: names a listing lacked', () => {
  it('are absent until the listing expires; a name the mount made since is not', () => {
    let now = 0;
    const cache = new AttrCache(1000, () => now);
    cache.listed('/d', ['a', 'b']);
    expect([cache.absent('/d/a'), cache.absent('/d/c'), cache.absent('/e/c')]).toEqual([false, true, false]);
    cache.forget('/d/c');
    expect(cache.absent('/d/c')).toBe(false);
    expect(cache.absent('/d/z')).toBe(true);
    now = 1000;
    expect(cache.absent('/d/z')).toBe(false);
  });

  it('nothing below a removed or renamed directory is absent by its old listing', () => {
    const cache = new AttrCache(1000, () => 0);
    cache.listed('/d/x', ['y']);
    cache.listed('/', ['d']);
    cache.forgetTree('/d');
    expect(cache.absent('/d/x/z')).toBe(false);
  });

  // The mount's own changes, in any order, against what exists: absent() never denies a name that exists.
  it('never reports absent a name that exists, whatever the mount made or removed after a listing', () => {
    const name = fc.constantFrom('a', 'b', 'c');
    const path = fc.array(name, { minLength: 1, maxLength: 3 }).map((parts) => `/${parts.join('/')}`);
    const op = fc.oneof(
      fc.record({ kind: fc.constant('list' as const), path: fc.oneof(fc.constant('/'), path) }),
      fc.record({ kind: fc.constant('make' as const), path }),
      fc.record({ kind: fc.constant('remove' as const), path }),
      fc.record({ kind: fc.constant('tick' as const), path: fc.constant('/') }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        let now = 0;
        const cache = new AttrCache(1000, () => now);
        const exists = new Set<string>(['/']);
        const under = (dir: string) => (dir === '/' ? '/' : `${dir}/`);
        for (const o of ops) {
          if (o.kind === 'tick') now += 400;
          else if (o.kind === 'list') {
            if (!exists.has(o.path)) continue;
            const names = [...exists].filter((p) => p !== o.path && p.startsWith(under(o.path)) && !p.slice(under(o.path).length).includes('/'));
            cache.listed(o.path, names.map((p) => p.slice(under(o.path).length)));
          } else if (o.kind === 'make') {
            // mkdir -p: each missing ancestor is made (and forgotten) first, as the kernel asks for them.
            const parts = o.path.split('/').slice(1);
            for (let i = 1; i <= parts.length; i++) {
              const p = `/${parts.slice(0, i).join('/')}`;
              if (exists.has(p)) continue;
              exists.add(p);
              cache.forget(p);
            }
          } else {
            for (const p of [...exists]) if (p === o.path || p.startsWith(`${o.path}/`)) exists.delete(p);
            cache.forgetTree(o.path);
          }
          for (const p of exists) if (p !== '/' && cache.absent(p)) return false;
        }
        return true;
      }),
    );
  });
});

describe('AttrCache.listAhead', () => {
  it('lists a directory once while its entries may be cached: concurrent misses share it, a failure is swallowed', async () => {
    let now = 0;
    const cache = new AttrCache(1000, () => now);
    let calls = 0;
    const list = () => {
      calls++;
      return Promise.reject(new Error('gone'));
    };
    await Promise.all([cache.listAhead('/d', list), cache.listAhead('/d', list)]);
    expect(calls).toBe(1);
    now = 999;
    await cache.listAhead('/d', list);
    expect(calls).toBe(1);
    now = 1000;
    await cache.listAhead('/d', list);
    expect(calls).toBe(2);
  });

  it('counts the mount\'s changes (epoch), so a listing read before one is not kept', () => {
    const cache = new AttrCache(1000, () => 0);
    const before = cache.epoch;
    cache.forget('/d/a');
    cache.forgetTree('/e');
    expect(cache.epoch).toBe(before + 2);
  });
});
