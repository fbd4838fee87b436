import type { FsBatchResult, FsBatchSwap, FsExpect, FsSwapResult, FsTarget, FsVersion, KeyedMutex } from '../../seam/index.js';
import type { UpperChange, UpperState } from './state.js';

/** A swap as the overlay plans it: `swap`'s request, plus where a moved file comes from. */
export interface SwapPlanRequest {
  readonly target: FsTarget;
  readonly expect: FsExpect;
  readonly bytes: Uint8Array | null;
  readonly from?: FsTarget;
}

/** A planned swap: its result, and the upper change that publishes it (none when nothing changes). */
export interface PlannedSwap {
  readonly result: FsSwapResult;
  readonly change?: UpperChange;
}

export interface OverlayBatchDeps {
  readonly lock: KeyedMutex;
  readonly treeLock: string;
  readonly state: UpperState;
  lockAll<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T>;
  planSwap(swap: SwapPlanRequest, signal: AbortSignal | undefined, creating: true): Promise<PlannedSwap | undefined>;
}

/**
 * B1 in the overlay: under every target's lock and the tree lock, every swap is planned against
 * the upper as it is; if all expectations hold, their changes go to the upper as one change, so
 * one save (one journal record, one fsync). A save that fails leaves the upper as it was.
 */
export async function applyOverlayBatch(deps: OverlayBatchDeps, swaps: readonly FsBatchSwap[], signal: AbortSignal | undefined): Promise<FsBatchResult> {
  const keys = [...new Set(swaps.map((s) => s.target.targetKey as string))].sort();
  return deps.lockAll(keys, () =>
    deps.lock.run(deps.treeLock, async () => {
      const planned: PlannedSwap[] = [];
      for (const [index, swap] of swaps.entries()) {
        const p = (await deps.planSwap(swap, signal, true))!;
        if (!p.result.ok) return { ok: false, index, current: p.result.current };
        planned.push(p);
      }
      const entries: NonNullable<UpperChange['entries']>[number][] = [];
      const addDirs = new Set<string>();
      for (const { change } of planned) {
        entries.push(...(change?.entries ?? []));
        for (const dir of change?.addDirs ?? []) addDirs.add(dir);
      }
      if (entries.length > 0 || addDirs.size > 0) await deps.state.apply({ entries, addDirs: [...addDirs] });
      const versions: (FsVersion | undefined)[] = planned.map((p) => (p.result.ok ? p.result.version : undefined));
      return { ok: true, versions };
    }),
  );
}
