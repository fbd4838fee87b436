import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { RETRY_CAP_MS, retryDelayMs } from '../../src/seam/retry.js';
import { FsError, contentVersion, createFs, observe, type FsCurrent, type FsProvider, type FsTarget } from '../../src/seam/index.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * A memory provider whose swap loses the race `losses` times: before each of those swaps another
 * writer appends a line of its own (`other-k`), as a process outside the seam's lock would.
 */
function racing(losses: number, onSwap?: (n: number) => void) {
  const memory = createMemoryFs({ files: { '/w/a.txt': 'START\nEND\n' }, cwd: '/w' });
  const inner = memory.provider;
  const count = { swaps: 0, reads: 0 };
  // Without `modify`: the seam then reads and swaps, and retries a swap that lost.
  const { modify: _modify, ...swapOnly } = inner;
  const provider: FsProvider = {
    ...swapOnly,
    read: (target, options) => {
      count.reads++;
      return inner.read(target, options);
    },
    swap: async (target, request) => {
      const n = ++count.swaps;
      onSwap?.(n);
      if (n <= losses) {
        const now = dec.decode((await inner.read(target, { maxBytes: 1 << 20 })).bytes);
        await inner.swap(target, { expect: { kind: 'any' }, bytes: enc.encode(`${now}other-${n}\n`) });
      }
      return inner.swap(target, request);
    },
  };
  const text = async () => dec.decode((await inner.read(await inner.resolve('/w/a.txt', {}), { maxBytes: 1 << 20 })).bytes);
  return { fs: createFs(provider, { cwd: '/w' }), count, text };
}

const append = { oldString: 'START\n', newString: 'START\nmine\n' };

describe('G6: an unguarded read-modify-write that keeps losing the race', () => {
  it('completes however many times in a row it loses (past the old bound of 8), and loses no other write', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 14 }), async (losses) => {
        const { fs, count, text } = racing(losses);
        await fs.editText(await fs.resolve('a.txt'), append);
        expect(count.swaps).toBe(losses + 1);
        const lines = (await text()).split('\n');
        expect(lines.filter((l) => l === 'mine')).toHaveLength(1);
        for (let k = 1; k <= losses; k++) expect(lines).toContain(`other-${k}`);
      }),
      { numRuns: 12 },
    );
  });

  it('named example: 20 losses in a row, then the edit lands', async () => {
    const { fs, count, text } = racing(20);
    const done = await fs.editText(await fs.resolve('a.txt'), append);
    expect(count.swaps).toBe(21);
    expect(done.version).toBe(contentVersion(enc.encode(await text())));
  });

  it('stops with FS_ABORTED when its signal fires, and writes nothing of its own', async () => {
    const controller = new AbortController();
    const abortAt = 12;
    const { fs, count, text } = racing(Number.POSITIVE_INFINITY, (n) => n === abortAt && controller.abort());
    const target = await fs.resolve('a.txt');
    await expect(fs.editText(target, append, undefined, { signal: controller.signal })).rejects.toMatchObject({
      name: 'FsError',
      code: 'FS_ABORTED',
      message: expect.stringMatching(/^cannot edit "\/w\/a\.txt": aborted/),
    });
    expect(count.swaps).toBe(abortAt);
    expect(await text()).not.toContain('mine');
  });

  it('stops with FS_ABORTED at a deadline the signal carries', async () => {
    const { fs, text } = racing(Number.POSITIVE_INFINITY);
    const target = await fs.resolve('a.txt');
    await expect(fs.writeText(target, 'new\n', undefined, { signal: AbortSignal.timeout(30) })).rejects.toMatchObject({ code: 'FS_ABORTED' });
    expect(await text()).not.toContain('new');
  });

  it('a guarded edit of a file that changed answers FS_STALE_VERSION at once, with no retry', async () => {
    // Changed after the caller's read: the seam's own read already shows it, and nothing is swapped.
    const stale = racing(0);
    const target = await stale.fs.resolve('a.txt');
    const { version } = await stale.fs.readText(target);
    await stale.fs.writeText(target, 'START\nchanged\nEND\n');
    const swapsBefore = stale.count.swaps;
    await expect(stale.fs.editText(target, append, { version })).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    expect(stale.count.swaps).toBe(swapsBefore);

    // Changed between the seam's read and its swap: one swap, lost, and no second read or swap.
    const raced = racing(Number.POSITIVE_INFINITY);
    const t = await raced.fs.resolve('a.txt');
    const base = (await raced.fs.readText(t)).version;
    const reads = raced.count.reads;
    await expect(raced.fs.editText(t, append, { version: base })).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    expect(raced.count.swaps).toBe(1);
    expect(raced.count.reads).toBe(reads + 1);
    expect(await raced.text()).not.toContain('mine');
  });
});

describe('the pause between attempts', () => {
  it('is drawn below a ceiling that doubles with each loss up to a cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.double({ min: 0, max: 1, noNaN: true }), (lost, r) => {
        const ceiling = Math.min(RETRY_CAP_MS, 2 ** (lost - 1));
        const ms = retryDelayMs(lost, () => r);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThan(ceiling);
        expect(retryDelayMs(lost, () => 1 - Number.EPSILON)).toBeLessThanOrEqual(retryDelayMs(lost + 1, () => 1 - Number.EPSILON));
      }),
    );
  });
});

describe('a provider with modify', () => {
  /** Memory storage with a `modify` that reports a lost creation race `losses` times first. */
  function withModify(losses: number, files: Record<string, string> = {}) {
    const memory = createMemoryFs({ files, cwd: '/w' });
    const inner = memory.provider;
    const count = { modify: 0, swaps: 0 };
    const provider: FsProvider = {
      ...inner,
      swap: (target, request) => {
        count.swaps++;
        return inner.swap(target, request);
      },
      async modify(target: FsTarget, { maxBytes }, change) {
        count.modify++;
        const current: FsCurrent | undefined = await inner.read(target, { maxBytes }).catch((err: unknown) => {
          if (err instanceof FsError && err.code === 'FS_NOT_FOUND') return undefined;
          throw err;
        });
        const bytes = change(current);
        if (count.modify <= losses) return { ok: false, current: observe(current) };
        return inner.swap(target, { expect: { kind: 'any' }, bytes });
      },
    };
    return { fs: createFs(provider, { cwd: '/w' }), count };
  }

  it('edits and writes through it, not through swap, and calls again after a lost creation', async () => {
    const { fs, count } = withModify(3);
    const target = await fs.resolve('new.txt');
    await fs.writeText(target, 'START\n');
    expect(count.modify).toBe(4);
    await fs.editText(target, append);
    expect(count.swaps).toBe(0);
    expect((await fs.readText(target)).text).toBe('START\nmine\n');
  });

  it('keeps the seam rules inside it: a stale guard, a missing file and an edit that does not match publish nothing', async () => {
    const { fs, count } = withModify(0, { '/w/a.txt': 'START\n' });
    const target = await fs.resolve('a.txt');
    const stale = contentVersion(enc.encode('other\n'));
    await expect(fs.editText(target, append, { version: stale })).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    await expect(fs.editText(await fs.resolve('gone.txt'), append)).rejects.toMatchObject({ code: 'FS_NOT_FOUND' });
    await expect(fs.editText(target, { oldString: 'nope', newString: 'x' })).rejects.toMatchObject({ code: 'FS_EDIT_NOT_FOUND' });
    await expect(fs.writeText(target, 'x\n', { kind: 'createIfAbsent' })).rejects.toMatchObject({ code: 'FS_NOT_OBSERVED' });
    expect(count.modify).toBe(4);
    expect(count.swaps).toBe(0);
    expect((await fs.readText(target)).text).toBe('START\n');
  });
});
