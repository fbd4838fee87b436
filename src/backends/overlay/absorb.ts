import { posix } from 'node:path';
import { FsError } from '../../seam/index.js';
import { coreOf } from './compose.js';
import { TREE_LOCK, type OverlayCore } from './core.js';
import { lockAll } from './provider-locks.js';
import { changePaths, changesLayer, layerChange } from './state-history.js';
import type { CheckpointLabel, UpperChange, UpperSnapshot } from './state.js';
import type { OverlayFileSystem } from './types.js';

/**
 * A sandbox as a run found it: its layer then, and a fork in memory that shows exactly that view.
 * The run's changes are made on the fork (through the contract, compared with the view it
 * started from), then imported into the sandbox as one change by `absorb`.
 */
export interface LayerStart {
  readonly layer: UpperSnapshot;
  readonly fork: OverlayFileSystem;
}

export interface AbsorbResult {
  /** The keys the imported change set changed (sorted). */
  readonly applied: readonly string[];
  /** The topmost keys the run changed that the sandbox also changed meanwhile: not imported. */
  readonly conflicts: readonly string[];
  /** The sandbox's layer right after the import (what a run's kept layer is brought up to). */
  readonly layer: UpperSnapshot;
}

function coreOrThrow(overlay: OverlayFileSystem): OverlayCore {
  const core = coreOf(overlay);
  if (core === undefined) throw new FsError('FS_INVALID_ARGUMENT', 'a run needs a sandbox made by createOverlayFs');
  return core;
}

/** The sandbox's layer now and a fork showing it (constant time). */
export async function startLayer(overlay: OverlayFileSystem): Promise<LayerStart> {
  coreOrThrow(overlay);
  const fork = await overlay.fork();
  return { layer: coreOrThrow(fork).state.snapshot(), fork };
}

/** The fork's layer now: the start with what the run did to it. */
export function forkLayer(start: LayerStart): UpperSnapshot {
  return coreOrThrow(start.fork).state.snapshot();
}

/**
 * Imports what was done on `start.fork` into `overlay` as one change (one checkpoint, labelled),
 * but for the keys that overlap what the sandbox itself changed since the start: those are
 * conflicts and the sandbox keeps its own. Checked again under the locks of every key imported.
 */
export async function absorb(overlay: OverlayFileSystem, start: LayerStart, label: CheckpointLabel): Promise<AbsorbResult> {
  const core = coreOrThrow(overlay);
  const ran = layerChange(start.layer, forkLayer(start), () => true);
  if (!changesLayer(ran)) return { applied: [], conflicts: [], layer: core.state.snapshot() };
  const theirsNow = () => layerChange(start.layer, core.state.snapshot(), () => true);
  for (let attempt = 1; attempt <= 20; attempt++) {
    const conflicts = overlaps(ran, theirsNow());
    const change = without(ran, conflicts);
    const keys = changePaths(change);
    const layer = await lockAll(core.lock, keys, () =>
      core.lock.run(TREE_LOCK, async () => {
        if (overlaps(change, theirsNow()).length > 0) return undefined;
        if (changesLayer(change)) await core.state.apply({ ...change, label });
        return core.state.snapshot();
      }),
    );
    if (layer !== undefined) return { applied: keys, conflicts, layer };
  }
  throw new FsError('FS_STALE_VERSION', 'cannot import the run: the sandbox kept changing; try again');
}

interface Sides {
  /** Every key the change names. */
  readonly all: Set<string>;
  /** Keys whose change hides or shows what lies below them (removed or restored directories, whiteouts). */
  readonly covering: Set<string>;
  /** Directories it made (two sides making the same directory agree). */
  readonly made: Set<string>;
}

function sidesOf(change: UpperChange): Sides {
  const all = new Set(changePaths(change));
  const covering = new Set<string>([...(change.addOpaque ?? []), ...(change.dropOpaque ?? []), ...(change.dropDirs ?? [])]);
  for (const [key, entry] of change.entries ?? []) if (entry === undefined || entry.kind === 'whiteout') covering.add(key);
  const made = new Set(change.addDirs ?? []);
  for (const key of [...(change.entries ?? []).map(([k]) => k), ...covering]) made.delete(key);
  return { all, covering, made };
}

function hasAncestorIn(key: string, set: Set<string>): boolean {
  for (let k = posix.dirname(key); ; k = posix.dirname(k)) {
    if (set.has(k)) return true;
    if (k === '/' || k === '.') return false;
  }
}

/**
 * The topmost keys of `mine` that overlap `theirs`: the same key (unless both only made that
 * directory), a key below one `theirs` removed or restored, or a key whose removal covers one
 * `theirs` changed.
 */
export function overlaps(mineChange: UpperChange, theirsChange: UpperChange): string[] {
  const mine = sidesOf(mineChange);
  const theirs = sidesOf(theirsChange);
  if (theirs.all.size === 0) return [];
  const theirAncestors = new Set<string>();
  for (const key of theirs.all) {
    for (let k = posix.dirname(key); !theirAncestors.has(k); k = posix.dirname(k)) {
      theirAncestors.add(k);
      if (k === '/' || k === '.') break;
    }
  }
  const hit = new Set<string>();
  for (const key of mine.all) {
    const same = theirs.all.has(key) && !(mine.made.has(key) && theirs.made.has(key));
    const below = hasAncestorIn(key, theirs.covering);
    const covers = mine.covering.has(key) && theirAncestors.has(key);
    if (same || below || covers) hit.add(key);
  }
  return [...hit].filter((key) => !hasAncestorIn(key, hit)).sort();
}

/** `change` without the keys at or below `drop`. */
function without(change: UpperChange, drop: readonly string[]): UpperChange {
  if (drop.length === 0) return change;
  const set = new Set(drop);
  const keep = (key: string) => !set.has(key) && !hasAncestorIn(key, set);
  const list = (l: readonly string[] | undefined) => (l ?? []).filter(keep);
  return {
    entries: (change.entries ?? []).filter(([key]) => keep(key)),
    addDirs: list(change.addDirs),
    dropDirs: list(change.dropDirs),
    addOpaque: list(change.addOpaque),
    dropOpaque: list(change.dropOpaque),
  };
}
