import { describe, expect, it } from 'vitest';
import type { MemoryTree } from '../../src/backends/memory/index.js';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import { FsError, isFsError } from '../../src/seam/index.js';
import { FsTargetKey, createFs, grep, textStreamOf, type FsProvider, type FsSearchCandidates } from '../../src/index.js';

/** A memory store whose search answers every file as a candidate, with the contents `given` says. */
function storeGiving(given: (key: FsTargetKey) => Uint8Array | undefined, maxTextBytes?: number) {
  const base = createMemoryProvider({ files: { 'p/a.txt': 'aaaa\n', 'p/b.txt': 'bbbb\n', 'p/c.txt': 'cccc\n' } });
  const keys = ['/p/a.txt', '/p/b.txt', '/p/c.txt'].map((p) => FsTargetKey(p));
  const provider: FsProvider = Object.assign(Object.create(base) as FsProvider, {
    searchCandidates: async (): Promise<FsSearchCandidates> => {
      const contents = new Map<FsTargetKey, Uint8Array>();
      for (const k of [...keys, FsTargetKey('/p/none.txt')]) {
        const bytes = given(k);
        if (bytes !== undefined) contents.set(k, bytes);
      }
      // b.txt is left out of the candidates, but its contents are still given.
      return Object.assign(new Set(keys.filter((k) => k !== '/p/b.txt')), { contents });
    },
  });
  return createFs(provider, maxTextBytes === undefined ? {} : { maxTextBytes });
}

const enc = (s: string) => new TextEncoder().encode(s);

describe('searchCandidates with contents, through the seam', () => {
  it('keeps only contents of candidates within the bounds asked and the text limit', async () => {
    const fs = storeGiving((k) => enc(k === '/p/c.txt' ? 'c'.repeat(9) : 'xx'), 8);
    const top = await fs.resolve('/p');
    const query = { contains: enc('a'), alsoLargerThan: 100 };
    expect((await fs.searchCandidates!(top, query))!.contents).toEqual(new Map());
    const found = await fs.searchCandidates!(top, { ...query, contents: { maxFileBytes: 100, maxTotalBytes: 100 } });
    // Not b (no candidate), not none (no candidate), not c (over the text limit).
    expect([...found!.contents!.keys()]).toEqual(['/p/a.txt']);
    const small = await fs.searchCandidates!(top, { ...query, contents: { maxFileBytes: 1, maxTotalBytes: 100 } });
    expect(small!.contents!.size).toBe(0);
    const none = await fs.searchCandidates!(top, { ...query, contents: { maxFileBytes: 100, maxTotalBytes: 1 } });
    expect(none!.contents!.size).toBe(0);
    await expect(fs.searchCandidates!(top, { ...query, contents: { maxFileBytes: -1, maxTotalBytes: 1 } })).rejects.toSatisfy((e) => isFsError(e, 'FS_INVALID_ARGUMENT'));
  });

  it('grep searches the bytes given with the answer, checked as a read would be (T1)', async () => {
    const fs = storeGiving((k) => (k === '/p/a.txt' ? enc('given\n') : k === '/p/c.txt' ? enc('c\0') : undefined));
    const r = await grep(fs, 'e', { cwd: '/p' });
    expect(r.matches.map((m) => `${m.path}:${m.text}`)).toEqual(['/p/a.txt:given']);
    expect(r.skipped.map((s) => `${s.path}:${s.reason}`)).toEqual(['/p/c.txt:binary']);
  });

  it('textStreamOf gives what streamText gives for the same bytes', async () => {
    const fs = storeGiving(() => undefined);
    const target = await fs.resolve('/p/a.txt');
    const read = await fs.streamText(target, { unversioned: true });
    const given = textStreamOf(target, enc('aaaa\n'));
    const text = async (s: typeof read) => {
      let out = '';
      for await (const c of s.chunks) out += c;
      return { out, bom: s.bom, size: s.size, version: s.version };
    };
    expect(await text(given)).toEqual(await text(read));
    expect(() => textStreamOf(target, enc('\uFEFF\0'))).toThrow(/not a UTF-8 text file/);
  });

  it('a failing searchCandidates, asked while the walk starts, fails the grep, files or none', async () => {
    for (const files of [{ 'p/a.txt': 'aaaa\n' }, { 'p/empty': null }] as MemoryTree[]) {
      const base = createMemoryProvider({ files });
      let settled = false;
      const provider: FsProvider = Object.assign(Object.create(base) as FsProvider, {
        searchCandidates: async () => {
          await new Promise((r) => setTimeout(r, 20));
          settled = true;
          throw new FsError('FS_IO_ERROR', 'store down');
        },
      });
      await expect(grep(createFs(provider), 'a', { cwd: '/p' })).rejects.toSatisfy((e) => isFsError(e, 'FS_IO_ERROR'));
      expect(settled).toBe(true);
    }
  });

  it('a slow searchCandidates that heeds its signal is waited for, not cut short, when the walk finds no file', async () => {
    for (const files of [{ 'p/a.txt': 'aaaa\n' }, { 'p/empty': null }] as MemoryTree[]) {
      const base = createMemoryProvider({ files });
      const provider: FsProvider = Object.assign(Object.create(base) as FsProvider, {
        searchCandidates: (_top: unknown, _query: unknown, { signal }: { signal?: AbortSignal }) =>
          new Promise((resolve, reject) => {
            const timer = setTimeout(() => resolve(new Set(['/p/a.txt'])), 20);
            signal?.addEventListener('abort', () => {
              clearTimeout(timer);
              reject(new FsError('FS_ABORTED', 'aborted'));
            });
          }),
      });
      const result = await grep(createFs(provider), 'a', { cwd: '/p' });
      expect(result.matches.length).toBe('p/a.txt' in files ? 1 : 0);
    }
  });
});
