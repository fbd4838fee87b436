import { describe, expect, it } from 'vitest';
import { forEachBounded, settleAll } from '../../src/seam/settle.js';

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (err: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** One turn of the event loop: a settlement passed on through promises alone arrives before it ends. */
const turn = () => new Promise((done) => setImmediate(done));

describe('settleAll', () => {
  it('resolves with every value, in order', async () => {
    expect(await settleAll([Promise.resolve(1), Promise.resolve(2), Promise.resolve(3)])).toEqual([1, 2, 3]);
  });

  it('a failure while others are still running: settles only after they have, then throws the first failure', async () => {
    const slow = deferred<number>();
    const second = new Error('second');
    let settled = false;
    const all = settleAll([Promise.reject(new Error('first')), slow.promise, Promise.reject(second)]).finally(() => (settled = true));
    all.catch(() => undefined);
    await turn();
    expect(settled, 'settled while a promise was still pending').toBe(false);
    slow.resolve(2);
    await expect(all).rejects.toThrow('first');
  });
});

describe('forEachBounded', () => {
  it('runs every item, never more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    await forEachBounded([0, 1, 2, 3, 4, 5, 6], 3, async (item, index) => {
      expect(index).toBe(item);
      running++;
      most = Math.max(most, running);
      await turn();
      seen.push(item);
      running--;
    });
    expect(seen.sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(most).toBe(3);
  });

  it('a failure while others are running: no item starts after it, and the call settles only after those running have', async () => {
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const finished: number[] = [];
    let settled = false;
    const run = forEachBounded([0, 1, 2, 3, 4], 3, async (item) => {
      started.push(item);
      await gates[item]!.promise;
      finished.push(item);
    }).finally(() => (settled = true));
    run.catch(() => undefined);
    gates[1]!.reject(new Error('item 1 failed'));
    await turn();
    expect(settled, 'settled while items 0 and 2 were still running').toBe(false);
    gates[0]!.resolve();
    gates[2]!.resolve();
    await expect(run).rejects.toThrow('item 1 failed');
    expect(started).toEqual([0, 1, 2]);
    expect(finished.sort()).toEqual([0, 2]);
  });

  it('nothing to do: resolves at once', async () => {
    await forEachBounded([], 4, () => Promise.reject(new Error('never called')));
  });
});
