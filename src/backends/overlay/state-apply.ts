import type { UpperContext } from './state-context.js';
import type { CheckpointStamp } from './state-format.js';
import { changePaths, checkpointOf, keepCheckpoint, layerChange, release } from './state-history.js';
import { applyLive, applyTo, layerSnapshot } from './state-index.js';
import type { UpperChange, UpperSnapshot } from './state-types.js';

/**
 * Applies a saved change to the live layer and keeps its checkpoint (`stamp`; none for a change
 * that changes nothing). Each blob whose count fell is added to `free`.
 */
export function applyChange(cx: UpperContext, change: UpperChange, stamp: CheckpointStamp | undefined, free: Set<string>, replaced?: number): void {
  const released: string[] = [];
  applyLive(cx.live, change, released, cx.store ? cx.refs : undefined);
  if (stamp) keepCheckpoint(cx, checkpointOf(stamp, changePaths(change)), layerSnapshot(cx.live), released, free, replaced);
  else release(cx, released, free);
}

/**
 * The changes with each replacement (adopting a fork) written out as the change from the layer
 * before it to the one it brings, so that it is saved, and checkpointed, like any other change.
 */
export function expandReplace(layer: UpperSnapshot, changes: readonly UpperChange[]): readonly UpperChange[] {
  if (!changes.some((c) => c.replace)) return changes;
  let now = layer;
  return changes.map((c) => {
    let flat = c;
    if (c.replace) {
      const { replace, ...rest } = c;
      const diff = layerChange(now, replace, () => true);
      flat = {
        ...rest,
        entries: [...(diff.entries ?? []), ...(rest.entries ?? [])],
        addDirs: [...(diff.addDirs ?? []), ...(rest.addDirs ?? [])],
        dropDirs: [...(diff.dropDirs ?? []), ...(rest.dropDirs ?? [])],
        addOpaque: [...(diff.addOpaque ?? []), ...(rest.addOpaque ?? [])],
        dropOpaque: [...(diff.dropOpaque ?? []), ...(rest.dropOpaque ?? [])],
      };
    }
    now = applyTo(now, flat);
    return flat;
  });
}
