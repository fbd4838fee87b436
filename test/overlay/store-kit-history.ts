import fc from 'fast-check';
import { expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { composeOverlay } from '../../src/backends/overlay/compose.js';
import { RUNS, lowerTreeArb, opsArb, runOp, viewOf, type ViewEntry } from './helpers.js';
import type { StoreBacking } from './store-kit.js';

type View = Record<string, ViewEntry>;

/** The view a rewind to `id` shows (in a fork, so `fs` stays as it is). */
async function viewAt(fs: OverlayFileSystem, id: number): Promise<View> {
  const fork = await fs.fork();
  await fork.rewind(id);
  return viewOf(fork);
}

/** Notes the view after the checkpoint an operation ended on. */
async function note(fs: OverlayFileSystem, seen: Map<number, View>): Promise<void> {
  const last = fs.checkpoints().at(-1);
  if (last !== undefined && !seen.has(last.id)) seen.set(last.id, await viewOf(fs));
}

/** Kept checkpoints are consecutive ids (the oldest dropped first), at most `keep` of them. */
function expectConsecutive(fs: OverlayFileSystem, keep: number): void {
  const kept = fs.checkpoints();
  expect(kept.length).toBeLessThanOrEqual(keep);
  kept.forEach((c, i) => i > 0 && expect(c.id).toBe(kept[i - 1]!.id + 1));
}

/** The checkpoint rules of the overlay's upper layer over one kind of store (part of the store kit). */
export function describeHistoryKit(backing: StoreBacking, runs: (n: number) => number): void {
  it('checkpoints survive reopening: the same list (ids, times, labels, paths), and a rewind to each shows the view then', async () => {
    await fc.assert(
      fc.asyncProperty(lowerTreeArb, opsArb, fc.boolean(), fc.constantFrom(2, 1000), async (tree, ops, compactOften, keep) => {
        const place = await backing.fresh();
        const lower = createMemoryFs({ files: tree });
        const tuning = { keepCheckpoints: keep, ...(compactOften ? { compactMinBytes: 0, compactRatio: 1 } : {}) };
        const fs = await composeOverlay({ lower }, await place.open(), tuning);
        const seen = new Map<number, View>();
        for (const [i, op] of ops.entries()) {
          await fs.label({ owner: `agent-${i % 2}`, source: `step ${i}` }, () => runOp(fs, op));
          await note(fs, seen);
        }
        const reopened = await composeOverlay({ lower }, await place.open(), tuning);
        expect(reopened.checkpoints()).toEqual(fs.checkpoints());
        expectConsecutive(reopened, keep);
        for (const c of reopened.checkpoints().slice(-3)) if (seen.has(c.id)) expect(await viewAt(reopened, c.id)).toEqual(seen.get(c.id));
        // A rewind made after reopening is kept too.
        const first = reopened.checkpoints()[0];
        if (first !== undefined && seen.has(first.id)) {
          await reopened.rewind(first.id);
          const again = await composeOverlay({ lower }, await place.open(), tuning);
          expect(await viewOf(again)).toEqual(seen.get(first.id));
          expect(again.checkpoints()).toEqual(reopened.checkpoints());
        }
      }),
      { numRuns: runs(RUNS / 2) },
    );
  });

  it('a crash at any store call leaves a consistent history: consecutive ids, each rewinding to the view then', async () => {
    await fc.assert(
      fc.asyncProperty(
        lowerTreeArb,
        opsArb,
        fc.integer({ min: 1, max: 80 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom(0, 300, 1 << 20),
        fc.constantFrom(3, 1000),
        fc.constantFrom(4, Infinity),
        async (tree, ops, crashAt, tear, compactMinBytes, keep, keepBytes) => {
          const place = await backing.fresh();
          const lower = createMemoryFs({ files: tree });
          const tuning = { compactMinBytes, compactRatio: 1, keepCheckpoints: keep, keepCheckpointBytes: keepBytes };
          const store = await place.crashing(crashAt, tear);
          const fs = await composeOverlay({ lower }, store, tuning).catch(() => undefined);
          // The model: the same operations in memory; the view at each checkpoint an operation ended on.
          const model = await createOverlayFs({ lower, keepCheckpoints: keep, keepCheckpointBytes: keepBytes });
          const seen = new Map<number, View>();
          for (const op of ops) {
            await runOp(model, op);
            await note(model, seen);
            if (fs !== undefined && !store.crashed) await runOp(fs, op);
          }
          const reopened = await composeOverlay({ lower }, await place.open(), tuning);
          expectConsecutive(reopened, keep);
          const kept = reopened.checkpoints();
          // A prefix of the model's history: the same stamps' paths, and the view now is the one at the newest.
          const byId = new Map(model.checkpoints().map((c) => [c.id, c]));
          for (const c of kept) if (byId.has(c.id)) expect(c.paths).toEqual(byId.get(c.id)!.paths);
          const last = kept.at(-1);
          if (last !== undefined && seen.has(last.id)) expect(await viewOf(reopened)).toEqual(seen.get(last.id));
          for (const c of kept) if (seen.has(c.id)) expect(await viewAt(reopened, c.id), `rewind to ${c.id}`).toEqual(seen.get(c.id));
          // It goes on numbering after what it kept.
          await reopened.writeText(await reopened.resolve('/after'), 'after');
          const again = await composeOverlay({ lower }, await place.open(), tuning);
          if (last !== undefined) expect(again.checkpoints().at(-1)!.id).toBe(last.id + 1);
        },
      ),
      { numRuns: runs(RUNS * 2) },
    );
  });
}
