import { mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import type { FileSystem } from '../../src/index.js';
import { FaultyIo } from '../reliability/faulty-io.js';

const areas: string[] = [];
afterEach(async () => {
  for (const a of areas.splice(0)) await rm(a, { recursive: true, force: true });
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A few turns of the event loop: a rejection passed on through promises alone arrives within them. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((done) => setImmediate(done));
}

describe('overlay commit settles only after every publication it started', () => {
  it('a failed directory flush of a batch: no descriptor open and no call made once commit() returns', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'dsh-fs-commit-settles-')));
    areas.push(dir);
    const root = join(dir, 'root');
    await mkdir(join(root, 'x'), { recursive: true });
    await mkdir(join(root, 'y'));
    const f = new FaultyIo();
    const local = createLocalFs({ root, io: f.io });
    // Marks the start of the batch's flush, so the faults below touch only its calls.
    let flushing = false;
    const lower = new Proxy(local, {
      get(target, prop, receiver) {
        if (prop !== 'flush') return Reflect.get(target, prop, receiver) as unknown;
        return (...args: Parameters<NonNullable<FileSystem['flush']>>) => {
          flushing = true;
          return target.flush!(...args);
        };
      },
    });
    const overlay = await createOverlayFs({ lower });
    await overlay.writeText(await overlay.resolve('x/a.txt'), 'a\n', { kind: 'createIfAbsent' });
    await overlay.writeText(await overlay.resolve('y/b.txt'), 'b\n', { kind: 'createIfAbsent' });

    // The flush of x fails at its open while that of y holds its descriptor, paused in its fsync
    // until the failure had every chance to reach the caller.
    const ySyncing = deferred();
    const xFailed = deferred();
    const release = deferred();
    const yClosed = deferred();
    let settled = false;
    let yClosedBeforeSettled: boolean | undefined;
    f.errno = 'EIO';
    f.intercept = async (call) => {
      if (!flushing) return;
      if (call.op === 'open' && call.path === join(root, 'x')) {
        await ySyncing.promise;
        xFailed.resolve();
        return 'fail';
      }
      if (call.op === 'handle.sync' && call.path === join(root, 'y')) {
        ySyncing.resolve();
        await release.promise;
      }
      if (call.op === 'handle.close' && call.path === join(root, 'y')) {
        yClosedBeforeSettled = !settled;
        yClosed.resolve();
      }
    };
    let openWhenSettled = -1;
    let callsWhenSettled = -1;
    const committing = overlay.commit().finally(() => {
      settled = true;
      openWhenSettled = f.open.size;
      callsWhenSettled = f.calls.length;
    });
    committing.catch(() => undefined);
    await xFailed.promise;
    await turns(5);
    release.resolve();
    const result = await committing;
    await yClosed.promise;

    expect(f.failed?.op).toBe('open');
    expect(yClosedBeforeSettled, 'the flush of y finished before commit() returned').toBe(true);
    expect(openWhenSettled, 'descriptors open when commit() returned').toBe(0);
    await turns(5);
    expect(f.calls.length, 'calls made after commit() returned').toBe(callsWhenSettled);
    expect(f.open.size).toBe(0);

    // Written but not known durable: both stay changes of the overlay, reported as failed.
    expect(result.committed).toEqual([]);
    expect(result.failed.map((p) => [p.path, p.code])).toEqual([
      [join(root, 'x/a.txt'), 'FS_IO_ERROR'],
      [join(root, 'y/b.txt'), 'FS_IO_ERROR'],
    ]);
    expect((await overlay.changes()).map((c) => c.path)).toEqual([join(root, 'x/a.txt'), join(root, 'y/b.txt')]);

    f.reset();
    flushing = false;
    const retry = await overlay.commit();
    expect(retry.failed).toEqual([]);
    expect(retry.committed).toEqual([join(root, 'x/a.txt'), join(root, 'y/b.txt')]);
    expect(await readFile(join(root, 'x/a.txt'), 'utf8')).toBe('a\n');
    expect(await readFile(join(root, 'y/b.txt'), 'utf8')).toBe('b\n');
    expect(f.open.size).toBe(0);
  });
});
