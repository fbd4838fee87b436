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
