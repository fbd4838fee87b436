import { posix } from 'node:path';
import { PMap, PSet } from './pmap.js';
import { blobId, isStored } from './state-format.js';
import type { UpperChange, UpperEntry, UpperFile, UpperSnapshot } from './state-types.js';

/**
 * The upper layer as now visible, with its indexes. Every map is persistent, so a fork takes them
 * all in constant time; each change replaces the maps it touches.
 */
export interface LiveLayer {
  entries: PMap<UpperEntry>;
  dirs: PSet;
  opaque: PSet;
  /** For each key: how many upper files and made directories lie strictly below it. */
  below: PMap<number>;
  /** For each key: how many upper files lie strictly below it. */
  filesBelow: PMap<number>;
  /** How many links the upper holds: resolution looks at the upper only when there are some. */
  links: number;
  /** The bytes of every file the upper holds, each counted (a quota counts them; see FsProvider.usage). */
  bytes: number;
  /** For each directory key: how many entries, made and removed directories are directly in it. */
  children: PMap<number>;
  /**
   * One buffer per distinct content, by version (a file's version is its content digest): every
   * entry with that content refers to it, so the upper never holds a content twice. Persistent,
   * like the indexes above, so that a fork shares them in constant time.
   */
  contents: PMap<{ readonly bytes: Uint8Array; readonly refs: number }>;
}

export function emptyLayer(): LiveLayer {
  return {
    entries: PMap.empty<UpperEntry>(),
    dirs: PSet.empty(),
    opaque: PSet.empty(),
    below: PMap.empty<number>(),
    filesBelow: PMap.empty<number>(),
    links: 0,
    bytes: 0,
    children: PMap.empty<number>(),
    contents: PMap.empty(),
  };
}

/** The whole upper layer now (constant time). */
export function layerSnapshot(live: LiveLayer): UpperSnapshot {
  return { entries: live.entries, dirs: live.dirs, opaque: live.opaque };
}

/** Takes a layer; with `indexed`, that layer's indexes too, else they are to be rebuilt. */
export function adoptMaps(live: LiveLayer, snap: UpperSnapshot, indexed?: LiveLayer): void {
  live.entries = snap.entries;
  live.dirs = snap.dirs;
  live.opaque = snap.opaque;
  if (indexed === undefined) return;
  live.below = indexed.below;
  live.filesBelow = indexed.filesBelow;
  live.links = indexed.links;
  live.bytes = indexed.bytes;
  live.children = indexed.children;
  live.contents = indexed.contents;
}

/** A layer with a change applied, its indexes aside (what a save is about to make visible). */
export function applyTo(snap: UpperSnapshot, change: UpperChange): UpperSnapshot {
  let { entries, dirs, opaque } = change.replace ?? snap;
  for (const [key, entry] of change.entries ?? []) entries = entry ? entries.set(key, entry) : entries.delete(key);
  for (const d of change.addDirs ?? []) dirs = dirs.add(d);
  for (const d of change.dropDirs ?? []) dirs = dirs.delete(d);
  for (const d of change.addOpaque ?? []) opaque = opaque.add(d);
  for (const d of change.dropOpaque ?? []) opaque = opaque.delete(d);
  return { entries, dirs, opaque };
}

/**
 * Applies a saved change to the live state, keeping blob reference counts and the descendant index.
 * `refs` are the stored blobs' counts (undefined without a store): each new file's stored blob is counted
 * here; the blob of each file the change replaced is added to `released`, to be released once no
 * retained checkpoint holds it (see state-history.ts).
 */
export function applyLive(live: LiveLayer, change: UpperChange, released: string[], refs: Map<string, number> | undefined): void {
  for (const [key, given] of change.entries ?? []) {
    const old = live.entries.get(key);
    const entry = given?.kind === 'file' ? intern(live, given) : given;
    if ((old === undefined) !== (entry === undefined)) child(live, key, old === undefined ? 1 : -1);
    if (old?.kind === 'file') {
      live.bytes -= old.bytes.byteLength;
      release(live, old);
      count(live, key, -1);
      count(live, key, -1, true);
      if (refs && isStored(old.bytes)) released.push(blobId(old.bytes));
    }
    if (entry?.kind === 'file') {
      live.bytes += entry.bytes.byteLength;
      count(live, key, 1);
      count(live, key, 1, true);
      if (refs && isStored(entry.bytes)) {
        const id = blobId(entry.bytes);
        refs.set(id, (refs.get(id) ?? 0) + 1);
      }
    }
    // A link holds its directory as a file does.
    for (const [e, delta] of [[old, -1], [entry, 1]] as const) {
      if (e?.kind !== 'link') continue;
      live.links += delta;
      count(live, key, delta);
      count(live, key, delta, true);
    }
    live.entries = entry ? live.entries.set(key, entry) : live.entries.delete(key);
  }
  applyDirs(live, change);
}

function applyDirs(live: LiveLayer, change: UpperChange): void {
  for (const d of change.addDirs ?? []) {
    if (live.dirs.has(d)) continue;
    live.dirs = live.dirs.add(d);
    count(live, d, 1);
    child(live, d, 1);
  }
  for (const d of change.dropDirs ?? []) {
    if (!live.dirs.has(d)) continue;
    live.dirs = live.dirs.delete(d);
    count(live, d, -1);
    child(live, d, -1);
  }
  for (const d of change.addOpaque ?? []) {
    if (live.opaque.has(d)) continue;
    live.opaque = live.opaque.add(d);
    child(live, d, 1);
  }
  for (const d of change.dropOpaque ?? []) {
    if (!live.opaque.has(d)) continue;
    live.opaque = live.opaque.delete(d);
    child(live, d, -1);
  }
}

function count(live: LiveLayer, key: string, delta: number, files = false): void {
  if (key === '/') return;
  let index = files ? live.filesBelow : live.below;
  for (let k = posix.dirname(key); ; k = posix.dirname(k)) {
    const n = (index.get(k) ?? 0) + delta;
    index = n === 0 ? index.delete(k) : index.set(k, n);
    if (k === '/' || k === '.') break;
  }
  if (files) live.filesBelow = index;
  else live.below = index;
}

function child(live: LiveLayer, key: string, delta: number): void {
  if (key === '/') return;
  const parent = posix.dirname(key);
  const n = (live.children.get(parent) ?? 0) + delta;
  live.children = n === 0 ? live.children.delete(parent) : live.children.set(parent, n);
}

/** Rebuilds the indexes and the content table after the maps were replaced. */
export function reindex(live: LiveLayer): void {
  const below = new Map<string, number>();
  const filesBelow = new Map<string, number>();
  const children = new Map<string, number>();
  const count = (index: Map<string, number>, key: string) => {
    if (key === '/') return;
    for (let k = posix.dirname(key); ; k = posix.dirname(k)) {
      index.set(k, (index.get(k) ?? 0) + 1);
      if (k === '/' || k === '.') return;
    }
  };
  const child = (key: string) => {
    if (key !== '/') children.set(posix.dirname(key), (children.get(posix.dirname(key)) ?? 0) + 1);
  };
  live.contents = PMap.empty();
  live.links = 0;
  live.bytes = 0;
  for (const [key, e] of live.entries) {
    child(key);
    if (e.kind === 'whiteout') continue;
    count(below, key);
    count(filesBelow, key);
    if (e.kind === 'link') {
      live.links++;
      continue;
    }
    live.bytes += e.bytes.byteLength;
    const shared = intern(live, e);
    if (shared !== e) live.entries = live.entries.set(key, shared);
  }
  for (const d of live.dirs) (count(below, d), child(d));
  for (const d of live.opaque) child(d);
  live.below = PMap.from(below);
  live.filesBelow = PMap.from(filesBelow);
  live.children = PMap.from(children);
}

/** The entry, referring to the one buffer held for its content (counted). */
function intern(live: LiveLayer, e: UpperFile): UpperFile {
  const held = live.contents.get(e.version);
  if (held === undefined || held.bytes.byteLength !== e.bytes.byteLength) {
    if (held === undefined) live.contents = live.contents.set(e.version, { bytes: e.bytes, refs: 1 });
    return e;
  }
  live.contents = live.contents.set(e.version, { bytes: held.bytes, refs: held.refs + 1 });
  return held.bytes === e.bytes ? e : { ...e, bytes: held.bytes };
}

function release(live: LiveLayer, e: UpperFile): void {
  const held = live.contents.get(e.version);
  if (held === undefined || held.bytes !== e.bytes) return;
  live.contents = held.refs === 1 ? live.contents.delete(e.version) : live.contents.set(e.version, { bytes: held.bytes, refs: held.refs - 1 });
}
