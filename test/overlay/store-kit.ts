import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type UpperStore } from '../../src/backends/overlay/index.js';
import { composeOverlay } from '../../src/backends/overlay/compose.js';
import { FsError } from '../../src/seam/index.js';
import { RUNS, lowerTreeArb, opsArb, runOp, stored, viewOf } from './helpers.js';
import { describeHistoryKit } from './store-kit-history.js';

/**
 * Where an overlay's upper layer is persisted, for the persistence properties every UpperStore
 * must pass (a memory disk, a host directory, PostgreSQL …).
 */
export interface StoreBacking {
  /** A fresh, empty place for one sandbox. */
  fresh(): Promise<StorePlace>;
  /** fast-check runs, as a share of the default (slow stores run fewer). */
  readonly runsFactor?: number;
}

export interface StorePlace {
  /** A store over the place as a newly started process opens it (every earlier one has ended). */
  open(): Promise<UpperStore>;
  /** A store over the place that crashes at its `crashAt`-th call (see crashAfter). */
  crashing(crashAt: number, tear: number): Promise<UpperStore & { readonly crashed: boolean }>;
}

/**
 * Wraps a store so that its `crashAt`-th call (1-based) and every later one fail, as when the
 * process died. The crashing call lands first when `tear` ≥ 0.5 (it landed, then the process
 * died); a crashing append writes `tear` of its bytes (truncating after them). `onCrash` lets go
 * of what the dead process held (a lock).
 */
export function crashAfter(inner: UpperStore, crashAt: number, tear: number, onCrash?: () => Promise<void>): UpperStore & { crashed: boolean } {
  let calls = 0;
  const dead = () => new FsError('FS_IO_ERROR', 'the process crashed');
  const out = {
    where: inner.where,
    crashed: false,
  } as UpperStore & { crashed: boolean };
  const die = async () => {
    out.crashed = true;
    await onCrash?.();
    return dead();
  };
  const wrap =
    <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>, landing: (...args: A) => Promise<unknown>) =>
    async (...args: A): Promise<R> => {
      if (out.crashed) throw dead();
      calls++;
      if (calls < crashAt) return fn(...args);
      await landing(...args).catch(() => {});
      throw await die();
    };
  const none = async () => {};
  const landed = <A extends unknown[]>(fn: (...args: A) => Promise<unknown>) => (tear >= 0.5 ? fn : none);
  out.readState = wrap('readState', () => inner.readState(), none);
  out.writeState = wrap('writeState', (b: Uint8Array) => inner.writeState(b), landed((b: Uint8Array) => inner.writeState(b)));
  out.readBlob = wrap('readBlob', (id: string) => inner.readBlob(id), none);
  out.writeBlob = wrap('writeBlob', (id: string, b: Uint8Array) => inner.writeBlob(id, b), landed((id: string, b: Uint8Array) => inner.writeBlob(id, b)));
  out.deleteBlob = wrap('deleteBlob', (id: string) => inner.deleteBlob(id), none);
  out.listBlobs = wrap('listBlobs', () => inner.listBlobs(), none);
  out.readJournal = wrap('readJournal', () => inner.readJournal(), none);
  out.writeJournal = wrap('writeJournal', (b: Uint8Array) => inner.writeJournal(b), landed((b: Uint8Array) => inner.writeJournal(b)));
  out.appendJournal = wrap(
    'appendJournal',
    (o: number, b: Uint8Array) => inner.appendJournal(o, b),
    (o: number, b: Uint8Array) => inner.appendJournal(o, b.subarray(0, Math.floor(b.byteLength * tear))),
  );
  return out;
}

const seed = { '/src/a.ts': 'original\n', '/src/b.ts': 'bee\n', '/keep.txt': 'k' };

/** The persistence rules of the overlay's upper layer, over one kind of store. */
export function describeUpperStoreKit(label: string, backing: StoreBacking): void {
  const runs = (n: number) => Math.max(3, Math.round(n * (backing.runsFactor ?? 1)));

  describe(`overlay upper store: ${label}`, () => {
    it('an overlay reopened from its store shows the same view and changes (journal appends and new documents)', async () => {
      await fc.assert(
        fc.asyncProperty(lowerTreeArb, opsArb, fc.boolean(), async (tree, ops, compactOften) => {
          const place = await backing.fresh();
          const lower = createMemoryFs({ files: tree });
          const tuning = compactOften ? { compactMinBytes: 0, compactRatio: 1 } : {};
          const fs = await composeOverlay({ lower }, await place.open(), tuning);
          for (const op of ops) await runOp(fs, op);
          const reopened = await composeOverlay({ lower }, await place.open(), tuning);
          expect(await viewOf(reopened)).toEqual(await viewOf(fs));
          expect(await reopened.changes()).toEqual(await fs.changes());
        }),
        { numRuns: runs(RUNS) },
      );
    });

    it('a crash at any store call reopens to a prefix of the changes that holds every acknowledged one', async () => {
      await fc.assert(
        fc.asyncProperty(
          lowerTreeArb,
          opsArb,
          fc.integer({ min: 1, max: 80 }),
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.constantFrom(0, 300, 1 << 20),
          async (tree, ops, crashAt, tear, compactMinBytes) => {
            const place = await backing.fresh();
            const lower = createMemoryFs({ files: tree });
            const tuning = { compactMinBytes, compactRatio: 1 };
            const store = await place.crashing(crashAt, tear);
            const fs = await composeOverlay({ lower }, store, tuning).catch(() => undefined);
            // The model: the same operations on an overlay in memory, its view after each one.
            const model = await createOverlayFs({ lower });
            const views = [await viewOf(model)];
            let acknowledged = 0;
            for (const op of ops) {
              await runOp(model, op);
              views.push(await viewOf(model));
              if (fs === undefined) continue;
              const wasCrashed = store.crashed;
              const got = await runOp(fs, op);
              if (!store.crashed) {
                acknowledged = views.length - 1;
                // Before the crash the persisted overlay is the model.
                expect(await viewOf(fs)).toEqual(views[acknowledged]);
              } else if (!wasCrashed && !(got && typeof got === 'object' && 'error' in got)) {
                // The crash came after the change was saved (deleting an unused blob): acknowledged.
                acknowledged = views.length - 1;
              }
            }
            const reopened = await composeOverlay({ lower }, await place.open(), tuning);
            const got = await viewOf(reopened);
            // A prefix of the changes: the state after some operation, no earlier than the last
            // acknowledged one, and at most the one the crash interrupted.
            const candidates = views.slice(acknowledged, acknowledged + 2);
            expect(candidates.some((v) => JSON.stringify(v) === JSON.stringify(got)), JSON.stringify({ got, candidates })).toBe(true);
            // It is a working sandbox again.
            await reopened.writeText(await reopened.resolve('/after'), 'after');
            const again = await composeOverlay({ lower }, await place.open(), tuning);
            expect((await again.readText(await again.resolve('/after'))).text).toBe('after');
          },
        ),
        { numRuns: runs(RUNS * 4) },
      );
    });

    it('concurrent mutations are saved together and all survive a reopen', async () => {
      const place = await backing.fresh();
      const lower = createMemoryFs({ files: seed });
      const fs = await createOverlayFs({ lower, store: await place.open() });
      await Promise.all(Array.from({ length: 20 }, async (_, i) => fs.writeText(await fs.resolve(`/many/f${i}.txt`), `file ${i}\n`)));
      const reopened = await createOverlayFs({ lower, store: await place.open() });
      expect((await reopened.changes()).map((c) => c.path)).toHaveLength(20);
      expect(await viewOf(reopened)).toEqual(await viewOf(fs));
    });

    it('keeps one blob per distinct content still referred to, none for small contents, and none after a discard of everything (no checkpoint kept)', async () => {
      const place = await backing.fresh();
      const lower = createMemoryFs({ files: seed });
      const fs = await createOverlayFs({ lower, store: await place.open(), keepCheckpoints: 0 });
      await fs.writeText(await fs.resolve('/src/a.ts'), stored('one'));
      await fs.writeText(await fs.resolve('/x/same1'), stored('same'));
      await fs.writeText(await fs.resolve('/x/same2'), stored('same'));
      await fs.writeText(await fs.resolve('/src/a.ts'), stored('two'));
      await fs.writeText(await fs.resolve('/x/small'), 'small\n');
      const store = await place.open();
      expect(await store.listBlobs()).toHaveLength(2);
      await fs.discard();
      expect(await (await place.open()).listBlobs()).toEqual([]);
      const reopened = await createOverlayFs({ lower, store: await place.open() });
      expect(await reopened.changes()).toEqual([]);
    });

    describeHistoryKit(backing, runs);
  });
}
