import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import type { FileSystem, FsChange } from '../../src/seam/index.js';
import { codeOf } from '../support/code-of.js';

const utf8 = (s: string) => new TextEncoder().encode(s);

/** The lower, counting its stats. */
function countingLower(files: Record<string, string>) {
  const inner = createMemoryFs({ files });
  const count = { stats: 0 };
  const fs: FileSystem = new Proxy(inner, {
    get: (t, k) => {
      if (k === 'stat') return (...args: Parameters<FileSystem['stat']>) => (count.stats++, t.stat(...args));
      const v: unknown = Reflect.get(t, k, t);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
  return { fs, count };
}

async function creates(fs: FileSystem, paths: readonly string[]): Promise<FsChange[]> {
  return Promise.all(paths.map(async (p) => ({ kind: 'write' as const, target: await fs.resolve(p), bytes: utf8(`${p}\n`), intent: { kind: 'createIfAbsent' as const } })));
}

describe('overlay: a batch asks the lower once per path, and nothing below what it lacks', () => {
  it('200 new files in 10 new directories cost a few stats of the lower, not one or more per file', async () => {
    const lower = countingLower({ '/src/a.ts': 'a\n' });
    const fs = await createOverlayFs({ lower: lower.fs });
    const paths = Array.from({ length: 200 }, (_, i) => `/out/d${i % 10}/f${i}.txt`);
    const changes = await creates(fs, paths);
    lower.count.stats = 0;
    await fs.applyChanges!(changes);
    // The first file asks about itself, its directory and /out; every later one is below /out,
    // known missing: a handful, where it was 1,000 (five a file) before.
    expect(lower.count.stats).toBeLessThan(20);
    for (const p of [paths[0]!, paths[199]!]) expect((await fs.readText(await fs.resolve(p))).text).toBe(`${p}\n`);
  });

  it('a file of the lower in the way of a new file\'s directory still refuses the batch whole', async () => {
    const lower = countingLower({ '/src/a.ts': 'a\n' });
    const fs = await createOverlayFs({ lower: lower.fs });
    const changes = await creates(fs, ['/new/x.txt', '/src/a.ts/below.txt', '/src/a.ts/more/deeper.txt']);
    expect(await codeOf(fs.applyChanges!(changes))).toBe('FS_NOT_DIRECTORY');
    expect(await fs.stat(await fs.resolve('/new/x.txt'))).toBeUndefined();
    expect((await fs.readText(await fs.resolve('/src/a.ts'))).text).toBe('a\n');
  });
});
