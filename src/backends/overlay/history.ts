import { FsError, throwIfAborted, type FileSystem } from '../../seam/index.js';
import { settleAll } from '../../seam/settle.js';
import { TREE_LOCK, type OverlayCore } from './core.js';
import type { LayerSides } from './fork.js';
import { lockAll } from './provider-locks.js';
import { rewindPathsChange } from './history-ancestors.js';
import { changePaths, changesLayer, layerChange } from './state-history.js';
import type { Checkpoint, CheckpointLabel, UpperSnapshot } from './state.js';
import type { OverlayReviewOptions, OverlayRewindOptions } from './types.js';

/** Checkpoints and rewind for an overlay (see docs/history.md). */
export function createHistory(core: OverlayCore, view: FileSystem) {
  const { state, lock } = core;

  /** The layer of checkpoint `id`, or FS_NOT_FOUND. */
  function layerAt(id: number | string, what: string): UpperSnapshot {
    const n = checkpointId(id, what);
    const layer = state.checkpoint(n);
    if (layer !== undefined) return layer;
    const kept = state.checkpoints();
    const range = kept.length === 0 ? 'none is kept' : `those kept are ${kept[0]!.id} to ${kept.at(-1)!.id}`;
    throw new FsError('FS_NOT_FOUND', `${what}: there is no checkpoint ${n} (${range})`);
  }

  /** Makes the view what it was at checkpoint `id` (at and below `paths`), as one change. */
  async function rewind(id: number | string, options: OverlayRewindOptions = {}): Promise<void> {
    const what = `cannot rewind to checkpoint ${String(id)}`;
    const { signal } = options;
    const target = layerAt(id, what);
    const paths = options.paths;
    if (paths !== undefined && !Array.isArray(paths)) throw new FsError('FS_INVALID_ARGUMENT', `${what}: paths must be an array`);
    const roots = paths === undefined ? undefined : await settleAll(paths.map(async (p) => (await view.resolve(p, { signal })).targetKey));
    const label = state.currentLabel() ?? { source: `rewind to ${String(id)}` };
    const changeNow = () => (roots === undefined ? layerChange(state.snapshot(), target, () => true) : rewindPathsChange(core, state.snapshot(), target, roots, signal));
    // The lock of every key it changes, in sorted order, then the tree lock (as rmdir and rename
    // take them); if the keys changed meanwhile, again with the new set.
    for (let attempt = 1; ; attempt++) {
      throwIfAborted(signal, what);
      const keys = changePaths(await changeNow());
      const done = await lockAll(lock, keys, () =>
        lock.run(TREE_LOCK, async () => {
          const change = await changeNow();
          if (changePaths(change).some((k) => !keys.includes(k))) return false;
          if (changesLayer(change)) await state.apply({ ...change, label });
          return true;
        }),
      );
      if (done) return;
      if (attempt >= 20) throw new FsError('FS_STALE_VERSION', `${what}: the overlay kept changing; try again`);
    }
  }

  /** The layers `changes`/`diff` compare for `from`/`to`; undefined without them. */
  function sides(options: OverlayReviewOptions): LayerSides | undefined {
    const { from, to } = options;
    if (from === undefined && to === undefined) return undefined;
    if (from === undefined) throw new FsError('FS_INVALID_ARGUMENT', '`to` needs `from`: the checkpoint to compare from');
    if (options.against !== undefined) throw new FsError('FS_INVALID_ARGUMENT', 'give either `against` or `from`/`to`, not both');
    const base = layerAt(from, 'cannot compare checkpoints');
    if (to === undefined) return { base, now: state.snapshot(), live: true };
    return { base, now: layerAt(to, 'cannot compare checkpoints'), live: false };
  }

  return {
    checkpoints: (): Checkpoint[] => state.checkpoints(),
    rewind,
    label: <T>(label: CheckpointLabel, fn: () => Promise<T>): Promise<T> => {
      checkLabel(label);
      return state.label(label, fn);
    },
    sides,
  };
}

function checkpointId(id: number | string, what: string): number {
  const n = typeof id === 'string' && /^\d{1,15}$/.test(id) ? Number(id) : id;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new FsError('FS_INVALID_ARGUMENT', `${what}: a checkpoint id is a positive integer, not ${JSON.stringify(id)}`);
  }
  return n;
}

function checkLabel(label: CheckpointLabel): void {
  const ok = (v: unknown) => v === undefined || typeof v === 'string';
  if (typeof label !== 'object' || label === null || !ok(label.owner) || !ok(label.source)) {
    throw new FsError('FS_INVALID_ARGUMENT', 'a label is { owner?: string, source?: string }');
  }
}
