import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { drainUntil, feedOpArb, perPath, runOp } from '../seam/feed-helpers.js';

describe('overlay: the change feed (W1)', () => {
  it('property: the feed delivers exactly the successful operations made through the view, in order per path; the lower reports none', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(feedOpArb, { maxLength: 25 }), async (ops) => {
        const lower = createMemoryFs({ files: { '/a': 'a', '/d/b': 'b', '/e/g': 'g' } });
        const fs = await createOverlayFs({ lower });
        const watch = fs.watch!();
        const lowerWatch = lower.watch!();
        await Promise.all([watch.ready, lowerWatch.ready]);
        const expected = [];
        for (const op of ops) {
          const change = await runOp(fs, op);
          if (change !== undefined) expected.push(change);
        }
        await fs.mkdir(await fs.resolve('/sentinel'));
        await lower.mkdir(await lower.resolve('/lower-sentinel'));
        const got = await drainUntil(watch, '/sentinel');
        expect(await drainUntil(lowerWatch, '/lower-sentinel')).toEqual([]);
        await Promise.all([watch.return(), lowerWatch.return()]);
        expect(perPath(got)).toEqual(perPath(expected));
        expect(got).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });

  it('a labelled change carries its owner; rewind, discard and adopt say overflow; commit changes no view and says nothing', async () => {
    const lower = createMemoryFs({ files: { '/a.txt': 'a' } });
    const fs = await createOverlayFs({ lower });
    const watch = fs.watch!();
    await watch.ready;
    const a = await fs.resolve('/a.txt');
    await fs.label({ owner: 'agent-7', source: 'tool:write' }, () => fs.writeText(a, 'a2'));
    await fs.writeText(a, 'a3');
    expect((await watch.next()).value).toMatchObject({ kind: 'write', path: '/a.txt', owner: 'agent-7' });
    expect((await watch.next()).value).not.toHaveProperty('owner');
    const first = fs.checkpoints()[0]!.id;
    await fs.rewind(first);
    expect((await watch.next()).value).toEqual({ kind: 'overflow', path: '/' });
    await fs.discard();
    expect((await watch.next()).value).toEqual({ kind: 'overflow', path: '/' });
    const fork = await fs.fork();
    await fork.writeText(await fork.resolve('/b.txt'), 'b');
    await fs.adopt(fork);
    expect((await watch.next()).value).toEqual({ kind: 'overflow', path: '/' });
    await fs.commit();
    await fs.mkdir(await fs.resolve('/s'));
    expect((await watch.next()).value).toEqual({ kind: 'mkdir', path: '/s' });
    await watch.return();
  });
});
