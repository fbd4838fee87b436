import { hash } from 'node:crypto';
import { FsError, FsVersion, contentVersion } from '../../seam/index.js';
import { PMap, PSet } from './pmap.js';
import type { UpperStore } from './store.js';
import type { HeldCheckpoint } from './state-context.js';
import { blobId, isStored, rememberBlobId, type DocCheckpoint, type DocEntry, type JournalRecord } from './state-format.js';
import { accumulate, changePaths, checkpointOf, keepCheckpoint, release, trimHistory, type HistoryContext } from './state-history.js';
import type { UpperEntry, UpperSnapshot } from './state-types.js';

/** The saved state as read: the document's layer and checkpoints, and the journal records after it. */
export interface SavedState {
  readonly docs: Map<string, DocEntry>;
  readonly dirs: Set<string>;
  readonly opaque: Set<string>;
  readonly history: readonly DocCheckpoint[];
  /** The id of the last checkpoint recorded before the document. */
  readonly checkpoint: number;
  readonly records: readonly JournalRecord[];
}

/** The live layer, the kept checkpoints and the blob counts of a saved state. */
export interface BuiltState {
  readonly layer: UpperSnapshot;
  readonly history: HeldCheckpoint[];
  readonly refs: Map<string, number>;
  readonly nextId: number;
}

class Missing extends Error {
  constructor(readonly blob: string) {
    super(blob);
  }
}

/**
 * Builds the live layer and the newest `keep` checkpoints: the document's layer (the newest of
 * its checkpoints), walked back through the undo records of the document's checkpoints, then
 * forward through the journal. Only the blobs those layers hold are read. `missing` names a blob
 * the store lacks (a writer may have dropped it meanwhile).
 */
export async function buildState(store: UpperStore, saved: SavedState, bounds: { keep: number; keepBytes: number }): Promise<BuiltState | { missing: string }> {
  try {
    return await build(store, saved, bounds);
  } catch (err) {
    if (err instanceof Missing) return { missing: err.blob };
    throw err;
  }
}

async function build(store: UpperStore, saved: SavedState, { keep, keepBytes }: { keep: number; keepBytes: number }): Promise<BuiltState> {
  const read = reader(store);
  const hx: HistoryContext = { history: [], refs: new Map(), keep, keepBytes, nextId: saved.checkpoint + 1 };
  for (const r of saved.records) if (r.cp) hx.nextId = Math.max(hx.nextId, r.cp.id + 1);
  // Only stored blobs are counted (see INLINE_MAX_BYTES).
  const count = (bytes: Uint8Array) => {
    if (!isStored(bytes)) return;
    const id = blobId(bytes);
    hx.refs.set(id, (hx.refs.get(id) ?? 0) + 1);
  };
  const labeled = saved.records.flatMap((r, i) => (r.cp ? [i] : []));
  // Checkpoints a record says were dropped (by bytes, or with a smaller count) stay dropped: their blobs may be gone.
  const from = saved.records.reduce((n, r) => Math.max(n, r.cp?.from ?? 0), 0);
  const gone = saved.history.filter((c) => c.id < from).length + labeled.filter((i) => saved.records[i]!.cp!.id < from).length;
  const drop = Math.max(0, saved.history.length + labeled.length - keep, gone);
  let layer: UpperSnapshot;
  let records = saved.records;
  if (drop >= saved.history.length && records.length > 0) {
    // No checkpoint of the document is kept: replay the records up to the first one kept (or all)
    // as written, so that blobs only dropped checkpoints held are never read.
    const cut = drop - saved.history.length < labeled.length ? labeled[drop - saved.history.length]! : records.length - 1;
    const docs = new Map(saved.docs);
    const dirs = new Set(saved.dirs);
    const opaque = new Set(saved.opaque);
    for (const rec of records.slice(0, cut + 1)) replayDocs(docs, dirs, opaque, rec);
    layer = await readLayer(docs, dirs, opaque, read, count);
    const first = records[cut]!;
    if (first.cp) hx.history.push({ info: checkpointOf(first.cp, changePaths(first)), layer, released: [], upTo: 0 });
    records = records.slice(cut + 1);
  } else {
    layer = await readLayer(saved.docs, saved.dirs, saved.opaque, read, count);
    const kept = saved.history.slice(Math.min(saved.history.length, drop));
    hx.history.push(...accumulate(await walkBack(layer, kept, read, count)));
  }
  for (const c of hx.history) hx.nextId = Math.max(hx.nextId, c.info.id + 1);
  let pending: string[] = [];
  for (const rec of records) {
    const released: string[] = [];
    layer = await replay(layer, rec, read, released, count);
    if (rec.cp === undefined) {
      // A record of an older journal: no checkpoint (its blobs are let go with the next one's).
      pending.push(...released);
      continue;
    }
    keepCheckpoint(hx, checkpointOf(rec.cp, changePaths(rec)), layer, [...pending, ...released], new Set());
    pending = [];
  }
  if (hx.history.length === 0) release(hx, pending, new Set());
  // Reopened with a smaller bound of bytes: the oldest go.
  trimHistory(hx, new Set());
  return { layer, history: hx.history, refs: hx.refs, nextId: hx.nextId };
}

/** A layer as written, with its contents read; each file's blob is counted. */
async function readLayer(
  docs: ReadonlyMap<string, DocEntry>,
  dirs: ReadonlySet<string>,
  opaque: ReadonlySet<string>,
  read: (e: DocEntry) => Promise<UpperEntry>,
  count: (bytes: Uint8Array) => void,
): Promise<UpperSnapshot> {
  const entries = new Map<string, UpperEntry>();
  for (const e of docs.values()) {
    const entry = await read(e);
    if (entry.kind === 'file') count(entry.bytes);
    entries.set(e.path, entry);
  }
  return { entries: PMap.from(entries), dirs: PSet.from(dirs), opaque: PSet.from(opaque) };
}

/** The document's kept checkpoints, from its layer (the newest's) back through their undo records. */
async function walkBack(
  layer: UpperSnapshot,
  kept: readonly DocCheckpoint[],
  read: (e: DocEntry) => Promise<UpperEntry>,
  count: (bytes: Uint8Array) => void,
): Promise<HeldCheckpoint[]> {
  const back: HeldCheckpoint[] = [];
  let at = layer;
  for (let i = kept.length - 1; i >= 0; i--) {
    const { undo, paths, ...stamp } = kept[i]!;
    // The undo brings back what the change replaced: counted while this checkpoint is not the oldest.
    const brought: string[] = [];
    const bring = (bytes: Uint8Array) => {
      if (!isStored(bytes)) return;
      brought.push(blobId(bytes));
      count(bytes);
    };
    const before = i > 0 && undo ? await replay(at, undo, read, [], bring) : at;
    back.push({ info: checkpointOf(stamp, paths), layer: at, released: brought, upTo: 0 });
    at = before;
  }
  return back.reverse();
}

function replayDocs(entries: Map<string, DocEntry>, dirs: Set<string>, opaque: Set<string>, rec: JournalRecord): void {
  for (const e of rec.entries ?? []) {
    if ('drop' in e) entries.delete(e.path);
    else entries.set(e.path, e);
  }
  for (const d of rec.addDirs ?? []) dirs.add(d);
  for (const d of rec.dropDirs ?? []) dirs.delete(d);
  for (const d of rec.addOpaque ?? []) opaque.add(d);
  for (const d of rec.dropOpaque ?? []) opaque.delete(d);
}

/** A layer with a record applied; the blobs of the files it replaced go to `released`, those it brings to `count`. */
async function replay(
  layer: UpperSnapshot,
  rec: JournalRecord,
  read: (e: DocEntry) => Promise<UpperEntry>,
  released: string[],
  count: (bytes: Uint8Array) => void,
): Promise<UpperSnapshot> {
  let { entries, dirs, opaque } = layer;
  for (const e of rec.entries ?? []) {
    const old = entries.get(e.path);
    if (old?.kind === 'file' && isStored(old.bytes)) released.push(blobId(old.bytes));
    if ('drop' in e) {
      entries = entries.delete(e.path);
      continue;
    }
    const entry = await read(e);
    if (entry.kind === 'file') count(entry.bytes);
    entries = entries.set(e.path, entry);
  }
  for (const d of rec.addDirs ?? []) dirs = dirs.add(d);
  for (const d of rec.dropDirs ?? []) dirs = dirs.delete(d);
  for (const d of rec.addOpaque ?? []) opaque = opaque.add(d);
  for (const d of rec.dropOpaque ?? []) opaque = opaque.delete(d);
  return { entries, dirs, opaque };
}

function inline(data: string): Uint8Array {
  const buf = Buffer.from(data, 'base64');
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** Reads entries as the document wrote them, each content once (and checked against its digest). */
function reader(store: UpperStore): (e: DocEntry) => Promise<UpperEntry> {
  const cache = new Map<string, Uint8Array>();
  return async (e) => {
    const base = e.base === null ? undefined : FsVersion(e.base);
    if (e.blob === null) return typeof e.link === 'string' ? { kind: 'link', text: e.link, base } : { kind: 'whiteout', base };
    let bytes = cache.get(e.blob);
    if (bytes === undefined) {
      bytes = e.data === undefined ? await store.readBlob(e.blob) : inline(e.data);
      if (bytes === undefined) throw new Missing(e.blob);
      const id = hash('sha256', bytes, 'hex');
      const what = e.data === undefined ? `overlay blob ${e.blob}` : `the inline content of "${e.path}"`;
      if (id !== e.blob) throw new FsError('FS_IO_ERROR', `${what} in "${store.where}" is corrupt (its content digest is ${id})`);
      rememberBlobId(bytes, id);
      cache.set(id, bytes);
    }
    const origin = e.origin && { path: e.origin.path, ...(e.origin.version === undefined ? {} : { version: FsVersion(e.origin.version) }) };
    return {
      kind: 'file', bytes, version: contentVersion(bytes), mtimeMs: e.mtimeMs ?? 0, base,
      ...(origin ? { origin } : {}), ...(e.executable === true ? { executable: true } : {}),
      ...(e.baseData === undefined ? {} : { baseBytes: inline(e.baseData) }),
    };
  };
}
