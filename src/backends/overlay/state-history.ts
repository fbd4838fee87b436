import { compareNames } from '../../seam/index.js';
import { PMap, PSet } from './pmap.js';
import type { HeldCheckpoint, UpperContext } from './state-context.js';
import { blobId, docEntry, isStored, type CheckpointStamp, type DocCheckpoint, type JournalRecord } from './state-format.js';
import type { Checkpoint, CheckpointLabel, UpperChange, UpperEntry, UpperSnapshot } from './state-types.js';

/**
 * Checkpoints: every change of the upper layer records one, holding the layer right after it
 * (the persistent maps as they are: constant time and memory). The newest `keep` are kept; a
 * stored blob stays as long as the live layer or a kept checkpoint holds it.
 *
 * Blob counts: `refs` counts, per blob, the live entries holding it plus, for every kept
 * checkpoint but the oldest, the entries its change replaced (`released`: the previous
 * checkpoints still hold them). When a checkpoint becomes the oldest kept, its `released` are
 * let go.
 */
export type HistoryContext = Pick<UpperContext, 'history' | 'refs' | 'keep' | 'keepBytes' | 'nextId'>;

/** The paths a change touches, sorted. */
export function changePaths(change: UpperChange | JournalRecord): string[] {
  const set = new Set<string>();
  for (const e of change.entries ?? []) set.add(Array.isArray(e) ? (e[0] as string) : (e as { path: string }).path);
  for (const list of [change.addDirs, change.dropDirs, change.addOpaque, change.dropOpaque]) for (const d of list ?? []) set.add(d);
  return [...set].sort(compareNames);
}

/** True when the change changes the layer (a sweep alone, or an empty change, does not). */
export function changesLayer(change: UpperChange): boolean {
  return [change.entries, change.addDirs, change.dropDirs, change.addOpaque, change.dropOpaque].some((l) => (l?.length ?? 0) > 0);
}

/** The stamp of a checkpoint: its id, the time now, and the change's labels. */
export function stampOf(id: number, label: CheckpointLabel | undefined): CheckpointStamp {
  return {
    id,
    time: Date.now(),
    ...(label?.owner === undefined ? {} : { owner: label.owner }),
    ...(label?.source === undefined ? {} : { source: label.source }),
  };
}

export function checkpointOf(stamp: CheckpointStamp, paths: readonly string[]): Checkpoint {
  const { from: _from, ...shown } = stamp;
  return { ...shown, paths };
}

/**
 * Keeps a checkpoint and drops the oldest beyond `keep`. `released` are the blobs of the files
 * the change replaced; each blob whose count fell is added to `free` (to delete when unused).
 */
export function keepCheckpoint(
  hx: HistoryContext,
  info: Checkpoint,
  layer: UpperSnapshot,
  released: readonly string[],
  free: Set<string>,
  replaced?: number,
): void {
  let held = released;
  const prev = hx.history.at(-1);
  if (prev === undefined) {
    release(hx, held, free);
    held = [];
  }
  const bytes = prev === undefined ? 0 : (replaced ?? replacedBytes(prev.layer, layer, info.paths));
  hx.history.push({ info, layer, released: held, upTo: (prev?.upTo ?? 0) + bytes });
  hx.nextId = Math.max(hx.nextId, info.id + 1);
  trimHistory(hx, free);
}

/** The bytes of the contents only checkpoints before the newest hold (what later changes replaced). */
export function heldBytes(history: readonly HeldCheckpoint[]): number {
  return history.length < 2 ? 0 : history.at(-1)!.upTo - history[0]!.upTo;
}

/** The bytes of the files of `before` at `paths` that `after` no longer holds. */
export function replacedBytes(before: UpperSnapshot, after: UpperSnapshot, paths: readonly string[]): number {
  let n = 0;
  for (const p of paths) {
    const e = before.entries.get(p);
    if (e?.kind === 'file' && after.entries.get(p) !== e) n += e.bytes.byteLength;
  }
  return n;
}

/**
 * The bytes each change replaces (the files it drops or overwrites), and for each the oldest id
 * kept after it when keeping its checkpoint drops older ones: `trimHistory`'s arithmetic, done
 * before the changes are saved so that their records can say what they dropped.
 */
export function plannedTrims(hx: HistoryContext, live: UpperSnapshot, changes: readonly UpperChange[], firstId: number): { bytes: number[]; from: (number | undefined)[] } {
  const hist = hx.history;
  const added: number[] = [];
  const upTo = (i: number) => (i < hist.length ? hist[i]!.upTo : added[i - hist.length]!);
  const idAt = (i: number) => (i < hist.length ? hist[i]!.info.id : firstId + (i - hist.length));
  const now = new Map<string, UpperEntry | undefined>();
  const bytes: number[] = [];
  const from: (number | undefined)[] = [];
  let start = 0;
  for (const change of changes) {
    let n = 0;
    for (const [key, e] of change.entries ?? []) {
      const old = now.has(key) ? now.get(key) : live.entries.get(key);
      if (old?.kind === 'file' && old !== e) n += old.bytes.byteLength;
      now.set(key, e);
    }
    bytes.push(n);
    if (!changesLayer(change)) {
      from.push(undefined);
      continue;
    }
    const len = hist.length + added.length;
    added.push(len > start ? upTo(len - 1) + n : 0);
    const before = start;
    while (len + 1 - start > hx.keep || (len + 1 - start > 1 && upTo(len) - upTo(start) > hx.keepBytes)) start++;
    from.push(start > before ? idAt(start) : undefined);
  }
  return { bytes, from };
}

/** Sets `upTo` along checkpoints built without it (read back from a document). */
export function accumulate(history: readonly HeldCheckpoint[]): HeldCheckpoint[] {
  let sum = 0;
  return history.map((c, i) => {
    sum += i === 0 ? 0 : replacedBytes(history[i - 1]!.layer, c.layer, c.info.paths);
    return { ...c, upTo: sum };
  });
}

/** Drops the oldest checkpoints while more than `keep` are kept, or they hold more than `keepBytes` (the newest stays). */
export function trimHistory(hx: HistoryContext, free: Set<string>): void {
  while (hx.history.length > hx.keep || (hx.history.length > 1 && heldBytes(hx.history) > hx.keepBytes)) {
    hx.history.shift();
    const oldest = hx.history[0];
    if (oldest === undefined || oldest.released.length === 0) continue;
    release(hx, oldest.released, free);
    hx.history[0] = { ...oldest, released: [] };
  }
}

/** Lets go of blobs (in memory, where there are no counts, nothing is counted). */
export function release(hx: Pick<HistoryContext, 'refs'>, ids: readonly string[], free: Set<string>): void {
  for (const id of ids) {
    const n = (hx.refs.get(id) ?? 1) - 1;
    if (n <= 0) hx.refs.delete(id);
    else hx.refs.set(id, n);
    free.add(id);
  }
}

/** The blob counts of a live layer and the kept checkpoints (see the top of this module). */
export function heldRefs(live: UpperSnapshot, history: readonly HeldCheckpoint[]): Map<string, number> {
  const refs = new Map<string, number>();
  const add = (id: string) => refs.set(id, (refs.get(id) ?? 0) + 1);
  for (const e of live.entries.values()) if (e.kind === 'file' && isStored(e.bytes)) add(blobId(e.bytes));
  for (const c of history) for (const id of c.released) add(id);
  return refs;
}

/** The checkpoints as the document keeps them: each but the oldest with the undo to the one before. */
export function docHistory(history: readonly HeldCheckpoint[]): DocCheckpoint[] {
  return history.map((c, i) => {
    const prev = history[i - 1];
    const undo = prev === undefined ? undefined : layerChange(c.layer, prev.layer, () => true);
    return { ...c.info, ...(undo ? { undo: recordOf(undo) } : {}) };
  });
}

function recordOf(change: UpperChange): JournalRecord {
  return {
    entries: (change.entries ?? []).map(([path, e]) => (e ? docEntry(path, e) : { path, drop: true as const })),
    ...(change.addDirs?.length ? { addDirs: change.addDirs } : {}),
    ...(change.dropDirs?.length ? { dropDirs: change.dropDirs } : {}),
    ...(change.addOpaque?.length ? { addOpaque: change.addOpaque } : {}),
    ...(change.dropOpaque?.length ? { dropOpaque: change.dropOpaque } : {}),
  };
}

/**
 * The change that takes layer `from` to layer `to` at the keys `pick` selects (in time of the
 * differences: the two layers share everything else).
 */
export function layerChange(from: UpperSnapshot, to: UpperSnapshot, pick: (key: string) => boolean): UpperChange {
  const entries: [string, UpperEntry | undefined][] = [];
  for (const [key, before, after] of PMap.differences(from.entries, to.entries)) {
    if (pick(key) && !sameEntry(before, after)) entries.push([key, after]);
  }
  const sets = (a: PSet, b: PSet) => {
    const add: string[] = [];
    const drop: string[] = [];
    for (const [key, side] of PSet.differences(a, b)) if (pick(key)) (side === 'right' ? add : drop).push(key);
    return [add, drop] as const;
  };
  const [addDirs, dropDirs] = sets(from.dirs, to.dirs);
  const [addOpaque, dropOpaque] = sets(from.opaque, to.opaque);
  return { entries, addDirs, dropDirs, addOpaque, dropOpaque };
}

/** True when two entries are the same but for being different objects (as after reopening). */
function sameEntry(a: UpperEntry | undefined, b: UpperEntry | undefined): boolean {
  if (a === undefined || b === undefined || a.kind !== b.kind || a.base !== b.base) return a === b;
  if (a.kind === 'whiteout') return true;
  if (a.kind === 'link') return a.text === (b as typeof a).text;
  const f = b as typeof a;
  return a.version === f.version && a.mtimeMs === f.mtimeMs && a.executable === f.executable &&
    a.origin?.path === f.origin?.path && a.origin?.version === f.origin?.version;
}

/** The kept checkpoint `id`, or undefined. */
export function findCheckpoint(history: readonly HeldCheckpoint[], id: number): HeldCheckpoint | undefined {
  let lo = 0;
  let hi = history.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const c = history[mid]!;
    if (c.info.id === id) return c;
    if (c.info.id < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}
