import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { DEFAULT_WATCH_BUFFER, contentVersion, createFs, isFsError, type FsChangeEvent } from '../../src/seam/index.js';
import { drainUntil, feedOpArb, perPath, runOp } from '../seam/feed-helpers.js';

describe('memory: the change feed (W1)', () => {
  it('property: the feed delivers exactly the successful operations, in order per path, and nothing for a failed one', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(feedOpArb, { maxLength: 25 }), async (ops) => {
        const fs = createMemoryFs({ files: { '/a': 'a', '/d/b': 'b' } });
        const watch = fs.watch!();
        await watch.ready;
        const expected = [];
        for (const op of ops) {
          const change = await runOp(fs, op);
          if (change !== undefined) expected.push(change);
        }
        await fs.mkdir(await fs.resolve('/sentinel'));
        const got = await drainUntil(watch, '/sentinel');
        await watch.return();
        expect(perPath(got)).toEqual(perPath(expected));
        // One at a time, so the whole order holds too.
        expect(got).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });

  it('paths filters by prefix (a rename is seen from either side); overflow and ends are always seen', async () => {
    const fs = createMemoryFs({ cwd: '/w', files: { '/w/src/a.ts': 'a', '/w/docs/b.md': 'b' } });
    const watch = fs.watch!({ paths: ['src'] });
    await watch.ready;
    await fs.writeText(await fs.resolve('docs/b.md'), 'b2');
    await fs.writeText(await fs.resolve('src/a.ts'), 'a2');
    await fs.rename(await fs.resolve('docs/b.md'), await fs.resolve('src/b.md'));
    await fs.rename(await fs.resolve('src/b.md'), await fs.resolve('/w/srcx'));
    expect((await watch.next()).value).toMatchObject({ kind: 'write', path: '/w/src/a.ts' });
    expect((await watch.next()).value).toMatchObject({ kind: 'rename', path: '/w/src/b.md', from: '/w/docs/b.md' });
    expect((await watch.next()).value).toMatchObject({ kind: 'rename', path: '/w/srcx', from: '/w/src/b.md' });
    fs.restore(fs.snapshot());
    expect((await watch.next()).value).toEqual({ kind: 'overflow', path: '/' });
    await watch.return();
    expect(await watch.next()).toEqual({ done: true, value: undefined });
  });

  it('overflow: a consumer that does not read holds at most bufferSize events, then one overflow, then new events again', async () => {
    const fs = createMemoryFs();
    const watch = fs.watch!({ bufferSize: 5 });
    await watch.ready;
    const target = await fs.resolve('/f');
    for (let i = 0; i < 50; i++) await fs.writeText(target, String(i));
    const got: FsChangeEvent[] = [];
    for (let i = 0; i < 6; i++) got.push((await watch.next()).value as FsChangeEvent);
    expect(got.slice(0, 5).map((e) => e.kind)).toEqual(['write', 'write', 'write', 'write', 'write']);
    // The five held are the oldest ones; the 45 after them are dropped and said to be.
    expect(got.slice(0, 5).map((e) => e.version)).toEqual(['0', '1', '2', '3', '4'].map((s) => contentVersion(Buffer.from(s))));
    expect(got[5]).toEqual({ kind: 'overflow', path: '/' });
    await fs.writeText(target, 'after');
    expect((await watch.next()).value).toMatchObject({ kind: 'write', path: '/f', version: (await fs.readText(target)).version });
    await watch.return();
  });

  it('many undelivered events cost at most the buffer: twice the default buffer of writes hold DEFAULT_WATCH_BUFFER events', async () => {
    const fs = createMemoryFs();
    const watch = fs.watch!();
    await watch.ready;
    const target = await fs.resolve('/f');
    for (let i = 0; i < DEFAULT_WATCH_BUFFER * 2; i++) await fs.writeText(target, String(i));
    let held = 0;
    for (;;) {
      const { value } = await watch.next();
      if (value!.kind === 'overflow') break;
      held++;
    }
    expect(held).toBe(DEFAULT_WATCH_BUFFER);
    await watch.return();
  });

  it('a signal ends the iteration, also while next() waits; for-await with break stops the subscription', async () => {
    const fs = createMemoryFs();
    const ac = new AbortController();
    const watch = fs.watch!({ signal: ac.signal });
    await watch.ready;
    const waiting = watch.next();
    ac.abort();
    expect(await waiting).toEqual({ done: true, value: undefined });

    const second = fs.watch!();
    await second.ready;
    const seen: string[] = [];
    const loop = (async () => {
      for await (const e of second) {
        seen.push(e.path);
        break;
      }
    })();
    await fs.writeText(await fs.resolve('/x'), 'x');
    await loop;
    expect(seen).toEqual(['/x']);
    expect(await second.next()).toEqual({ done: true, value: undefined });
  });

  it('bad options are FS_INVALID_ARGUMENT; a provider without watch gives a filesystem without watch', async () => {
    const fs = createMemoryFs();
    for (const bad of [{ bufferSize: 0 }, { paths: 'src' }, { signal: {} }, null]) {
      let error: unknown;
      try {
        fs.watch!(bad as never);
      } catch (err) {
        error = err;
      }
      expect(isFsError(error, 'FS_INVALID_ARGUMENT'), JSON.stringify(bad)).toBe(true);
    }
    const { watch: _dropped, ...bare } = fs.provider;
    expect(createFs(bare).watch).toBeUndefined();
  });

  it('a provider whose watch fails: ready and next() reject with an FsError', async () => {
    const { provider } = createMemoryFs();
    const fs = createFs({ ...provider, watch: () => Promise.reject(new Error('no listen')) });
    const watch = fs.watch!();
    await expect(watch.ready).rejects.toMatchObject({ name: 'FsError', code: 'FS_IO_ERROR' });
    await expect(watch.next()).rejects.toMatchObject({ name: 'FsError' });
  });

  it('an edit of a file over the text limit (streamed, swapFrom) is reported as a write with its new version', async () => {
    const fs = createMemoryFs({ maxTextBytes: 64, files: { '/big.txt': 'x\n'.repeat(100) + 'needle\n' } });
    const target = await fs.resolve('/big.txt');
    const watch = fs.watch!();
    await watch.ready;
    const outcome = await fs.editText(target, { oldString: 'needle', newString: 'found' });
    expect((await watch.next()).value).toEqual({ kind: 'write', path: '/big.txt', version: outcome.version });
    await watch.return();
  });
});
