import { toFsError } from '../../seam/index.js';
import type { UpperStore } from './store.js';
import type { Pending, UpperContext } from './state-context.js';
import { SETTLED, blobId, frame, isStored, journalHeader, journalRecord, serialize, type CheckpointStamp } from './state-format.js';
import { changePaths, changesLayer, checkpointOf, docHistory, heldRefs, keepCheckpoint, plannedTrims, stampOf, type HistoryContext } from './state-history.js';
import { adoptMaps, applyTo, layerSnapshot, reindex } from './state-index.js';
import { applyChange, expandReplace } from './state-apply.js';
import type { UpperChange, UpperSnapshot } from './state-types.js';

/** Queues a change or a task, and starts draining the queue unless it already is. */
export function enqueue(cx: UpperContext, store: UpperStore, pending: Pending): void {
  cx.queue.push(pending);
  if (!cx.draining) void drain(cx, store);
}

async function drain(cx: UpperContext, store: UpperStore): Promise<void> {
  cx.draining = true;
  try {
    while (cx.queue.length > 0) {
      const first = cx.queue[0]!;
      if ('task' in first) {
        cx.queue.shift();
        await first.task(store);
        continue;
      }
      const upTo = cx.queue.findIndex((p) => 'task' in p);
      const batch = cx.queue.splice(0, upTo < 0 ? cx.queue.length : upTo) as Extract<Pending, { change: UpperChange }>[];
      try {
        const saveError = await save(cx, store, batch.map(({ change }) => change), batch.every((p) => p.deferred === true));
        if (saveError === undefined) for (const { resolve } of batch) resolve();
        else {
          const error = toFsError(saveError, `cannot save the overlay state in "${store.where}"`);
          for (const { reject } of batch) reject(error);
        }
      } catch (err) {
        const error = toFsError(err, `cannot save the overlay state in "${store.where}"`);
        for (const { reject } of batch) reject(error);
      }
    }
  } finally {
    cx.draining = false;
  }
}

/**
 * Saves a group of changes and applies them. Throws (having applied nothing) when the save did
 * not land; returns the error when it landed but a later step failed (the caller still hears).
 */
async function save(cx: UpperContext, store: UpperStore, given: readonly UpperChange[], deferred: boolean): Promise<unknown> {
  // A replacement (adopting a fork) is saved as the change from this layer to the other.
  const changes = expandReplace(layerSnapshot(cx.live), given);
  // Deferred: the records and the blobs they name reach the disk with the next flushed save or
  // `syncJournal` (blobs first). A crash may keep a record without its blob: the record says it
  // was written lazily, and loading cuts the journal there.
  const lazy = deferred && store.syncJournal !== undefined;
  const written = await writeBlobs(cx, store, changes, lazy);
  const sweep = changes.some((c) => c.sweep);
  const limit = Math.max(cx.compactRatio * cx.snapshotBytes, cx.compactMinBytes);
  if (sweep || cx.journalEnd === undefined || cx.journalEnd > limit) return compact(cx, store, changes, sweep);
  const planned = plannedTrims(cx, layerSnapshot(cx.live), changes, cx.nextId);
  const stamps = stampAll(cx.nextId, changes, planned.from);
  const saveError = await appendRecords(cx, store, cx.journalEnd, changes, stamps, lazy);
  const touched = new Set(written);
  changes.forEach((change, i) => applyChange(cx, change, stamps[i], touched, planned.bytes[i]));
  for (const id of touched) {
    if ((cx.refs.get(id) ?? 0) > 0) continue;
    cx.refs.delete(id);
    if (!cx.pinned.has(id)) cx.dropLater.add(id);
  }
  if (!lazy) await dropReleased(cx, store);
  return saveError;
}

/**
 * Flushes the records of deferred saves to disk (a task between saves), with a record saying so:
 * loading checks the blobs of lazy records only after the last such record (before it, a blob
 * may since have been released and deleted).
 */
export async function syncDeferred(cx: UpperContext, store: UpperStore): Promise<void> {
  if (cx.unsynced && store.syncJournal !== undefined) {
    if (cx.journalEnd === undefined) await store.syncJournal();
    else {
      const mark = frame(SETTLED);
      // Flushed, so the blobs go first (see UpperStore.writeBlob).
      await store.appendJournal(cx.journalEnd, mark);
      cx.journalEnd += mark.byteLength;
    }
  }
  cx.unsynced = false;
  await dropReleased(cx, store);
}

/** Deletes the blobs saves released, once those saves are on disk; best effort (discard sweeps the rest). */
async function dropReleased(cx: UpperContext, store: UpperStore): Promise<void> {
  const ids = [...cx.dropLater];
  cx.dropLater.clear();
  for (const id of ids) {
    if ((cx.refs.get(id) ?? 0) > 0 || cx.pinned.has(id)) continue;
    await store.deleteBlob(id).catch(() => {});
  }
}

/** The stamps of the checkpoints a group of changes records (none for a change that changes nothing). */
function stampAll(first: number, changes: readonly UpperChange[], from: readonly (number | undefined)[]): (CheckpointStamp | undefined)[] {
  let id = first;
  return changes.map((c, i) => {
    if (!changesLayer(c)) return undefined;
    const stamp = stampOf(id++, c.label);
    return from[i] === undefined ? stamp : { ...stamp, from: from[i] };
  });
}

/** Writes the blobs the changes bring that the store lacks (small contents go inline); returns their ids. */
async function writeBlobs(cx: UpperContext, store: UpperStore, changes: readonly UpperChange[], lazy: boolean): Promise<Set<string>> {
  // Blobs first, then the record that refers to them: a crash leaves at worst an unused blob.
  const written = new Set<string>();
  for (const change of changes) {
    for (const [, entry] of change.entries ?? []) {
      if (entry?.kind !== 'file' || !isStored(entry.bytes)) continue;
      const id = blobId(entry.bytes);
      if (written.has(id) || (cx.refs.get(id) ?? 0) > 0) continue;
      await store.writeBlob(id, entry.bytes, lazy ? { sync: false } : undefined);
      written.add(id);
    }
  }
  return written;
}

/**
 * Appends the changes' records to the journal at `start`. Throws when they did not land; returns
 * the error when they landed all the same.
 */
async function appendRecords(
  cx: UpperContext,
  store: UpperStore,
  start: number,
  changes: readonly UpperChange[],
  stamps: readonly (CheckpointStamp | undefined)[],
  lazy: boolean,
): Promise<unknown> {
  const records = changes.map((c, i) => journalRecord(c, stamps[i], lazy)).filter((r) => r !== undefined);
  const bytes = Buffer.concat(records.map(frame));
  let saveError: unknown;
  if (bytes.byteLength > 0) {
    try {
      await store.appendJournal(start, bytes, lazy ? { sync: false } : undefined);
      // A flushed append flushes every record before it too.
      cx.unsynced = lazy ? true : false;
    } catch (err) {
      // Take the records back out, so a reopened overlay shows what this one shows (nothing new).
      const rolledBack = await store.appendJournal(start, new Uint8Array(0)).then(() => true, () => false);
      if (rolledBack) throw err;
      const now = await store.readJournal().catch(() => undefined);
      const landed =
        now !== undefined && now.byteLength >= start + bytes.byteLength &&
        Buffer.compare(now.subarray(start, start + bytes.byteLength), bytes) === 0;
      if (!landed) {
        // Whatever part of the records is there, the next save starts a new document and journal.
        cx.journalEnd = undefined;
        throw err;
      }
      saveError = err;
    }
  }
  cx.journalEnd = start + bytes.byteLength;
  return saveError;
}

/** Writes the whole new state as a new document generation, then starts its (empty) journal. */
export async function compact(cx: UpperContext, store: UpperStore, changes: readonly UpperChange[], sweep: boolean): Promise<unknown> {
  // The checkpoints are staged, and kept only once the document is in place.
  const hx: HistoryContext = { history: [...cx.history], refs: new Map(), keep: cx.keep, keepBytes: cx.keepBytes, nextId: cx.nextId };
  let next: UpperSnapshot = layerSnapshot(cx.live);
  for (const change of changes) {
    const before = next;
    next = applyTo(next, change);
    if (!changesLayer(change)) continue;
    const released: string[] = [];
    for (const [key] of change.entries ?? []) {
      const old = before.entries.get(key);
      if (old?.kind === 'file' && isStored(old.bytes)) released.push(blobId(old.bytes));
    }
    keepCheckpoint(hx, checkpointOf(stampOf(hx.nextId, change.label), changePaths(change)), next, released, new Set());
  }
  const generation = cx.generation + 1;
  const doc = serialize(cx.root, next, generation, { checkpoint: hx.nextId - 1, history: docHistory(hx.history) });
  let saveError: unknown;
  try {
    await store.writeState(doc);
  } catch (err) {
    // A failure after the document was renamed into place (flushing its directory): the
    // save landed, so the live view must show it too, and the caller still hears why.
    const landed = await store.readState().then(
      (now) => now !== undefined && Buffer.compare(now, doc) === 0,
      () => false,
    );
    if (!landed) throw err;
    saveError = err;
  }
  // The old journal names the old generation, so from here on it is ignored: a crash before the
  // new journal is in place reopens to this document alone.
  cx.generation = generation;
  cx.snapshotBytes = doc.byteLength;
  const header = journalHeader(cx.root, generation);
  cx.continues = false;
  // The document holds every record so far, on disk.
  cx.unsynced = false;
  cx.journalEnd = await store.writeJournal(header).then(
    () => header.byteLength,
    // The next save writes a new document again (and retries the journal).
    () => undefined,
  );
  // Blobs the live layer or a kept checkpoint holds (see state-history.ts).
  const refs = heldRefs(next, hx.history);
  cx.history = hx.history;
  cx.nextId = hx.nextId;
  const unused = [...cx.refs.keys()].filter((id) => !refs.has(id) && !cx.pinned.has(id));
  adoptMaps(cx.live, next);
  cx.refs = refs;
  reindex(cx.live);
  await dropBlobs(cx, store, unused, sweep);
  await dropReleased(cx, store);
  return saveError;
}

/** Deletes the blobs the new document no longer names; with `sweep`, every other one it does not name too. */
async function dropBlobs(cx: UpperContext, store: UpperStore, unused: readonly string[], sweep: boolean): Promise<void> {
  for (const id of unused) await store.deleteBlob(id).catch(() => {});
  if (!sweep) return;
  try {
    for (const id of await store.listBlobs()) if (!cx.refs.has(id) && !cx.pinned.has(id)) await store.deleteBlob(id);
  } catch {
    // The state is saved; stray blobs only waste space until the next sweep.
  }
}
