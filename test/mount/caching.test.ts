import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryFs, type MemoryFileSystem } from '../../src/backends/memory/index.js';
import { mountFs, type Mount } from '../../src/mount/index.js';
import { isFsError } from '../../src/seam/index.js';
import { cleanUp, fuseUnavailable, sh } from './helpers.js';

const why = await fuseUnavailable();
if (why !== undefined) console.warn(`mount tests skipped: ${why}`);

describe('cacheSeconds', () => {
  it('is refused outside 0 to 3600, before anything is mounted', async () => {
    const err = await mountFs(createMemoryFs(), '/nonexistent-mountpoint', { cacheSeconds: -1, load: { loader: async () => class {} as never } }).catch((e: unknown) => e);
    expect(isFsError(err) && err.code).toBe('FS_INVALID_ARGUMENT');
  });
});

// A long cache, so anything the mount's own changes failed to drop would still be served stale.
describe.skipIf(why !== undefined)('a caching mount sees its own changes at once', () => {
  let dir: string;
  let fs: MemoryFileSystem;
  let mount: Mount;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-'));
    fs = createMemoryFs({ files: { '/d/a.txt': 'one\n', '/d/b.txt': 'two\n', '/e/x.txt': 'x\n' } });
    mount = await mountFs(fs, dir, { cacheSeconds: 600 });
  });
  afterAll(async () => {
    await cleanUp(mount, dir);
  });

  const run = async (script: string) => {
    const r = await sh(`cd '${dir}' && ${script}`);
    expect(r.stderr).toBe('');
    return r.stdout.trim();
  };

  it('sizes after a write, an append and a truncate', async () => {
    expect(await run('ls -l d | wc -l; stat -c %s d/a.txt')).toBe('3\n4');
    expect(await run('printf "longer text\\n" > d/a.txt; stat -c %s d/a.txt')).toBe('12');
    expect(await run('printf "more\\n" >> d/a.txt; stat -c %s d/a.txt')).toBe('17');
    expect(await run('truncate -s 3 d/a.txt; stat -c %s d/a.txt; cat d/a.txt')).toBe('3\nlon');
  });

  it('names after create, remove and rename, file and directory', async () => {
    expect(await run('ls d')).toBe('a.txt\nb.txt');
    expect(await run('echo new > d/c.txt; rm d/b.txt; ls d')).toBe('a.txt\nc.txt');
    expect(await run('mv d/c.txt d/z.txt; ls d; test -e d/c.txt || echo gone')).toBe('a.txt\nz.txt\ngone');
    expect(await run('ls e; mv e f; ls f; test -e e/x.txt || echo gone; stat -c %s f/x.txt')).toBe('x.txt\nx.txt\ngone\n2');
    expect(await run('mkdir g && echo 1 > g/h; rm -r g; test -e g || echo gone')).toBe('gone');
  });

  it('names its listings lacked, once the mount made them', async () => {
    const script = [
      'ls d >/dev/null; test -e d/n.txt || echo absent',
      'echo n > d/n.txt; cat d/n.txt',
      'mkdir -p d/k/l; echo m > d/k/l/m.txt; cat d/k/l/m.txt',
      'ln -s n.txt d/lnk; cat d/lnk',
      'mv d/n.txt d/o.txt; cat d/o.txt; test -e d/n.txt || echo moved',
      'rm -r d/k; mkdir d/k; ls d/k | wc -l',
    ].join('; ');
    expect(await run(script)).toBe('absent\nn\nm\nn\nn\nmoved\n0');
    await run('rm -r d/k d/lnk d/o.txt');
  });

  it('the executable bit after chmod', async () => {
    expect(await run('stat -c %a d/a.txt; chmod +x d/a.txt; stat -c %a d/a.txt')).toBe('644\n755');
  });

  it('the contract got every change', async () => {
    const text = async (p: string) => Buffer.from((await fs.readBytes(await fs.resolve(p), { maxBytes: 1 << 20 })).bytes).toString();
    expect(await text('/d/a.txt')).toBe('lon');
    expect(await text('/f/x.txt')).toBe('x\n');
    expect(await fs.stat(await fs.resolve('/d/b.txt'))).toBeUndefined();
    expect(await fs.stat(await fs.resolve('/e'))).toBeUndefined();
  });
});

// A walk stats every name in turn: one listing of each directory answers them, names it lacks too.
describe.skipIf(why !== undefined)('a caching mount answers a walk from listings', () => {
  let dir: string;
  let fs: MemoryFileSystem;
  let mount: Mount;
  let asked = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-'));
    fs = createMemoryFs({ files: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`/d/f${i}.txt`, `${i}\n`])) });
    // Counts what the mount asks the provider about single names.
    const counted = new Proxy(fs, {
      get(t, k, r) {
        const v = Reflect.get(t, k, r) as unknown;
        if (k !== 'resolve' && k !== 'stat') return typeof v === 'function' ? v.bind(t) : v;
        return (...args: unknown[]) => {
          asked++;
          return (v as (...a: unknown[]) => unknown).apply(t, args);
        };
      },
    });
    mount = await mountFs(counted, dir, { cacheSeconds: 600 });
  });
  afterAll(async () => {
    await cleanUp(mount, dir);
  });

  it('stats of every file and of names not there ask the provider nothing after the first', async () => {
    const r = await sh(`cd '${dir}' && stat -c %s d/f0.txt`);
    expect(r.stdout.trim()).toBe('2');
    const before = asked;
    const names = Array.from({ length: 20 }, (_, i) => `d/f${i}.txt`).join(' ');
    const again = await sh(`cd '${dir}' && stat -c %s ${names} | sort -u; for i in 1 2 3 4 5; do test -e d/none$i || echo no; done | wc -l`);
    expect(again.stdout.trim()).toBe('2\n3\n5');
    expect(asked - before).toBe(0);
  });

  it('a file another writer adds shows once the listing expires, not later', async () => {
    // The mount's listing of d is at most 600 s old here: a fresh mount with a short cache shows the rule.
    const short = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-'));
    const m = await mountFs(fs, short, { cacheSeconds: 1 });
    try {
      expect((await sh(`cd '${short}' && ls d | wc -l; test -e d/late.txt || echo absent`)).stdout.trim()).toBe('20\nabsent');
      await fs.writeBytes(await fs.resolve('/d/late.txt'), Buffer.from('late\n'));
      await new Promise((done) => setTimeout(done, 1100));
      expect((await sh(`cd '${short}' && cat d/late.txt`)).stdout).toBe('late\n');
    } finally {
      await cleanUp(m, short);
    }
  });
});

// readdir needs names and types only; sizes and times are listed once a program asks for them.
describe.skipIf(why !== undefined)('a caching mount lists with sizes only where a program asks for them', () => {
  let dir: string;
  let mount: Mount;
  const listings: boolean[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-'));
    const fs = createMemoryFs({ files: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`/d/f${i}.txt`, `${i}\n`])) });
    const counted = new Proxy(fs, {
      get(t, k, r) {
        const v = Reflect.get(t, k, r) as unknown;
        if (k !== 'listDir') return typeof v === 'function' ? v.bind(t) : v;
        return (target: unknown, options?: { stats?: boolean }) => {
          if ((target as { displayPath?: string }).displayPath === '/d') listings.push(options?.stats === true);
          return (v as (...a: unknown[]) => unknown).call(t, target, options);
        };
      },
    });
    mount = await mountFs(counted, dir, { cacheSeconds: 600 });
  });
  afterAll(async () => {
    await cleanUp(mount, dir);
  });

  it('find lists d without sizes; the stats of its files then list it once with them', async () => {
    expect((await sh(`cd '${dir}' && find d -type f | wc -l`)).stdout.trim()).toBe('10');
    expect(listings).toEqual([false]);
    const names = Array.from({ length: 10 }, (_, i) => `d/f${i}.txt`).join(' ');
    expect((await sh(`cd '${dir}' && stat -c %s ${names} | sort -u`)).stdout.trim()).toBe('2');
    expect(listings).toEqual([false, true]);
  });
});
