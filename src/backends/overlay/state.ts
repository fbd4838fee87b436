import { hash } from 'node:crypto';
import { posix } from 'node:path';
import { FsError, FsVersion, compareNames, contentVersion, toFsError } from '../../seam/index.js';
import { PMap, PSet } from './pmap.js';
import type { UpperStore } from './store.js';

/** A file held by the upper layer. `base` is the lower's version when the overlay first changed it. */
export interface UpperFile {
  readonly kind: 'file';
  readonly bytes: Uint8Array;
  readonly version: FsVersion;
  /** When the overlay last wrote it (informational, like any mtime). */
  readonly mtimeMs: number;
  /** Undefined when the lower had no file there. */
  readonly base: FsVersion | undefined;
  /** Set when the file was moved here by rename: where it came from (see UpperOrigin). */
  readonly origin?: UpperOrigin;
  /** The executable bit (X1); absent means clear. */
  readonly executable?: true;
}

/**
 * Where a moved file came from: the lower path it was first moved away from (chained moves keep
 * the first). `version` is set when the content moved was the lower's own file there: while the
 * file still has that version, commit can publish the move with the lower's atomic rename.
 */
export interface UpperOrigin {
  readonly path: string;
  readonly version?: FsVersion;
}

/** A removal: hides whatever the lower has at this path. */
export interface UpperWhiteout {
  readonly kind: 'whiteout';
  readonly base: FsVersion | undefined;
}

/**
 * A symbolic link made in the overlay (K1), holding its text. `base` as for a whiteout: what the
 * lower had at this path (a link's version comes from its text, see `linkVersion`).
 */
export interface UpperLink {
  readonly kind: 'link';
  readonly text: string;
  readonly base: FsVersion | undefined;
}

export type UpperEntry = UpperFile | UpperWhiteout | UpperLink;

/** One atomic change of the upper layer. */
export interface UpperChange {
  /** `undefined` drops the entry, so the path shows the lower again. */
  readonly entries?: ReadonlyArray<readonly [string, UpperEntry | undefined]>;
  readonly addDirs?: readonly string[];
  readonly dropDirs?: readonly string[];
  /** Lower directories removed in the overlay: nothing of the lower at or below them shows. */
  readonly addOpaque?: readonly string[];
  readonly dropOpaque?: readonly string[];
  /** Also delete every stored blob nothing refers to (after the save). */
  readonly sweep?: boolean;
  /** Replace the whole upper layer with this one (adopting a fork); applied before the rest. */
  readonly replace?: UpperSnapshot;
}

/**
 * The whole upper layer at one moment. Immutable: forks share it as it is, and later changes of
 * either side make new maps that share their untouched parts.
 */
export interface UpperSnapshot {
  readonly entries: PMap<UpperEntry>;
  readonly dirs: PSet;
  readonly opaque: PSet;
}

export const STATE_FORMAT = 'dsh-fs-overlay';
/**
 * 3 adds `generation` and the journal (overlay.journal) of changes since the document; 2 added
 * `origin` on entries and `opaque`. Version-1 and -2 documents are still read (and saved as 3).
 */
export const STATE_FORMAT_VERSION = 3;
export const JOURNAL_FORMAT = 'dsh-fs-overlay-journal';

/** The journal is folded into a new state document once it is this many times the document's size. */
const COMPACT_RATIO = 2;
/** ...and at least this large (so a small sandbox does not rewrite its document every few saves). */
const COMPACT_MIN_BYTES = 256 * 1024;

/** An entry as the state document and the journal write it. */
interface DocEntry {
  readonly path: string;
  readonly base: string | null;
  readonly blob: string | null;
  readonly mtimeMs?: number;
  /** Version 2: where a moved file came from. */
  readonly origin?: { readonly path: string; readonly version?: string };
  /** Set (true) for an executable file; older documents have none. */
  readonly executable?: true;
  /** A link's text (then `blob` is null); older documents have none. */
  readonly link?: string;
}

interface StateDocument {
  readonly format: typeof STATE_FORMAT;
  readonly version: 1 | 2 | 3;
  /** The lower's root target key; a state is only reopened over the same root. */
  readonly root: string;
  /** Version 3: the journal whose header names this generation applies on top of this document. */
  readonly generation?: number;
  readonly entries: readonly DocEntry[];
  readonly dirs: readonly string[];
  /** Version 2: lower directories removed in the overlay (absent in version 1). */
  readonly opaque?: readonly string[];
}

/** The first record of a journal. */
interface JournalHeader {
  readonly format: typeof JOURNAL_FORMAT;
  readonly version: 3;
  readonly root: string;
  readonly generation: number;
  /**
   * A fork's first journal: the records of the fork base's journal (UpperStore.readForkBase) come
   * first, then this journal's own. Absent in every other journal (and in older ones).
   */
  readonly forkBase?: true;
}

/** One applied UpperChange. `drop` entries show the lower again. */
interface JournalRecord {
  readonly entries?: ReadonlyArray<DocEntry | { readonly path: string; readonly drop: true }>;
  readonly addDirs?: readonly string[];
  readonly dropDirs?: readonly string[];
  readonly addOpaque?: readonly string[];
  readonly dropOpaque?: readonly string[];
}

/** Each content's digest, cached on its bytes (shared by forks, which share the bytes). */
const blobIds = new WeakMap<Uint8Array, string>();

/** When the journal is folded into a new document (tests make it small). */
export interface UpperTuning {
  readonly compactRatio?: number;
  readonly compactMinBytes?: number;
}

type Pending =
  | { readonly change: UpperChange; readonly resolve: () => void; readonly reject: (err: unknown) => void }
  /** Runs alone, between saves (a fork of the saved state). */
  | { readonly task: (store: UpperStore) => Promise<void> };

/**
 * The upper layer: files, whiteouts and the directories the overlay made, keyed by the lower's
 * target keys. Held in memory; with a store, every change is saved before it becomes visible:
 * appended to a journal (one record per change, one fsync per group of changes), which is folded
 * into a new state document once it outgrows the document.
 */
export class UpperState {
  #entries = PMap.empty<UpperEntry>();
  #dirs = PSet.empty();
  #opaque = PSet.empty();
  /** For each key: how many upper files and made directories lie strictly below it. */
  #below = PMap.empty<number>();
  /** For each key: how many upper files lie strictly below it. */
  #filesBelow = PMap.empty<number>();
  /** How many links the upper holds: resolution looks at the upper only when there are some. */
  #links = 0;
  /** For each directory key: how many entries, made and removed directories are directly in it. */
  #children = PMap.empty<number>();
  /**
   * One buffer per distinct content, by version (a file's version is its content digest): every
   * entry with that content refers to it, so the upper never holds a content twice. Persistent,
   * like the indexes above, so that a fork shares them in constant time.
   */
  #contents = PMap.empty<{ readonly bytes: Uint8Array; readonly refs: number }>();
  /** A fork's parent layer as it was at the fork (loaded on demand when reopened). */
  #base: UpperSnapshot | (() => Promise<UpperSnapshot>) | undefined;
  /** The journal in place continues the fork base (a fork's first journal, until its first new document). */
  #continues = false;
  /** Blobs the fork base refers to: kept in the store for as long as the fork is (see `base`). */
  #pinned = new Set<string>();
  readonly #store: UpperStore | undefined;
  readonly #root: string;
  /** How many entries refer to each stored blob (every blob with a count is in the store). */
  #refs = new Map<string, number>();
  readonly #queue: Pending[] = [];
  #draining = false;
  /** The state document's generation (0: none, or one older than format 3). */
  #generation = 0;
  #snapshotBytes = 0;
  /** Where the next journal record goes; undefined when the next save must write a new document. */
  #journalEnd: number | undefined;

  readonly #compactRatio: number;
  readonly #compactMinBytes: number;

  private constructor(root: string, store: UpperStore | undefined, tuning: UpperTuning) {
    this.#root = root;
    this.#store = store;
    this.#compactRatio = tuning.compactRatio ?? COMPACT_RATIO;
    this.#compactMinBytes = tuning.compactMinBytes ?? COMPACT_MIN_BYTES;
  }

  static async open(root: string, store?: UpperStore, tuning: UpperTuning = {}): Promise<UpperState> {
    const state = new UpperState(root, store, tuning);
    if (store) await state.#load(store);
    return state;
  }

  /**
   * Immutable snapshots: each saved change replaces them (iterating one is safe across awaits,
   * and sees the state as it was when read).
   */
  get entries(): PMap<UpperEntry> {
    return this.#entries;
  }

  get dirs(): PSet {
    return this.#dirs;
  }

  /** Lower directories the overlay removed: the lower shows nothing at or below them. */
  get opaque(): PSet {
    return this.#opaque;
  }

  /** The whole upper layer now (constant time). */
  snapshot(): UpperSnapshot {
    return { entries: this.#entries, dirs: this.#dirs, opaque: this.#opaque };
  }

  /** For a fork: its parent's upper layer as it was at the fork; undefined for an overlay that is no fork. */
  async base(): Promise<UpperSnapshot | undefined> {
    if (typeof this.#base === 'function') this.#base = await this.#base();
    return this.#base;
  }

  /**
   * A fork of this state, in memory: it starts with this state's layer and shares it (constant
   * time and memory); from then on each changes only its own maps.
   */
  forkInMemory(): UpperState {
    const child = new UpperState(this.#root, undefined, { compactRatio: this.#compactRatio, compactMinBytes: this.#compactMinBytes });
    child.#adoptMaps(this.snapshot(), this);
    child.#base = this.snapshot();
    return child;
  }

  /**
   * A fork of this state kept in the host directory `dir` (see UpperStore.fork): taken between two
   * saves, so it holds exactly the saved state. The maps are shared as in memory.
   */
  forkInto(dir: string): Promise<UpperState> {
    const store = this.#store;
    if (store?.fork === undefined) {
      return Promise.reject(new FsError('FS_INVALID_ARGUMENT', 'only an overlay kept in a state directory forks into a state directory'));
    }
    return new Promise<UpperState>((resolve, reject) => {
      this.#queue.push({
        task: async () => {
          try {
            // A fork continues the saved journal: a state whose journal is not in place is saved anew first.
            // So does a fork's journal that continues its own fork base: a fork's base stands alone.
            if (this.#journalEnd === undefined || this.#continues) await this.#compact(store, [], false);
            if (this.#journalEnd === undefined) throw new FsError('FS_IO_ERROR', `cannot fork the overlay state in "${store.where}": its journal could not be written`);
            const header = frame({ format: JOURNAL_FORMAT, version: 3, root: this.#root, generation: this.#generation, forkBase: true } satisfies JournalHeader);
            const childStore = await store.fork!(dir, { journalEnd: this.#journalEnd, blobs: [...this.#refs.keys()], journal: header });
            const child = new UpperState(this.#root, childStore, { compactRatio: this.#compactRatio, compactMinBytes: this.#compactMinBytes });
            child.#adoptMaps(this.snapshot(), this);
            child.#base = this.snapshot();
            child.#refs = new Map(this.#refs);
            child.#pinned = new Set(this.#refs.keys());
            child.#generation = this.#generation;
            child.#snapshotBytes = this.#snapshotBytes;
            child.#journalEnd = header.byteLength;
            child.#continues = true;
            resolve(child);
          } catch (err) {
            reject(toFsError(err, `cannot fork the overlay state in "${store.where}" into "${dir}"`));
          }
        },
      });
      if (!this.#draining) void this.#drain(store);
    });
  }

  /** Replaces this state's layer with `other`'s (adopting a fork), saved as one new state document. */
  replaceWith(other: UpperState): Promise<void> {
    if (!this.#store) {
      // In memory: take the other's maps as they are (constant time).
      this.#adoptMaps(other.snapshot(), other);
      return Promise.resolve();
    }
    return this.apply({ replace: other.snapshot() });
  }

  /** Takes a layer; with `indexed`, that state's indexes too (its layer's), else they are to be rebuilt. */
  #adoptMaps(snap: UpperSnapshot, indexed?: UpperState): void {
    this.#entries = snap.entries;
    this.#dirs = snap.dirs;
    this.#opaque = snap.opaque;
    if (indexed === undefined) return;
    this.#below = indexed.#below;
    this.#filesBelow = indexed.#filesBelow;
    this.#links = indexed.#links;
    this.#children = indexed.#children;
    this.#contents = indexed.#contents;
  }

  /** True when the upper holds a file, or made a directory, strictly below `key` (constant time). */
  hasDescendant(key: string): boolean {
    return this.#below.has(key);
  }

  /** True when the upper holds a link anywhere (constant time). */
  get hasLinks(): boolean {
    return this.#links > 0;
  }

  /** True when the upper holds a file (or a link) strictly below `key` (constant time). */
  hasFileBelow(key: string): boolean {
    return this.#filesBelow.has(key);
  }

  /** True when the upper has an entry, or made or removed a directory, directly in `key` (constant time). */
  hasChild(key: string): boolean {
    return this.#children.has(key);
  }

  get persistent(): boolean {
    return this.#store !== undefined;
  }

  /**
   * Applies a change. With a store, changes arriving together are saved together (group commit:
   * one journal append and one fsync) and become visible only once saved; a failed save changes
   * nothing.
   */
  apply(change: UpperChange): Promise<void> {
    if (!this.#store) {
      if (change.replace) {
        this.#adoptMaps(change.replace);
        this.#reindex();
      }
      this.#applyLive(change, new Set());
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ change, resolve, reject });
      if (!this.#draining) void this.#drain(this.#store!);
    });
  }

  /**
   * Deletes every stored blob no entry refers to (e.g. left by a crash between two saves), and
   * folds the journal into a new state document.
   */
  sweep(): Promise<void> {
    // Queued like a change, so no save is writing a blob it has not yet referred to meanwhile.
    return this.#store ? this.apply({ sweep: true }) : Promise.resolve();
  }

  #blobId(bytes: Uint8Array): string {
    let id = blobIds.get(bytes);
    if (id === undefined) {
      id = hash('sha256', bytes, 'hex');
      blobIds.set(bytes, id);
    }
    return id;
  }

  async #drain(store: UpperStore): Promise<void> {
    this.#draining = true;
    try {
      while (this.#queue.length > 0) {
        const first = this.#queue[0]!;
        if ('task' in first) {
          this.#queue.shift();
          await first.task(store);
          continue;
        }
        const upTo = this.#queue.findIndex((p) => 'task' in p);
        const batch = this.#queue.splice(0, upTo < 0 ? this.#queue.length : upTo) as Extract<Pending, { change: UpperChange }>[];
        try {
          const saveError = await this.#save(store, batch.map(({ change }) => change));
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
      this.#draining = false;
    }
  }

  /**
   * Saves a group of changes and applies them. Throws (having applied nothing) when the save did
   * not land; returns the error when it landed but a later step failed (the caller still hears).
   */
  async #save(store: UpperStore, changes: readonly UpperChange[]): Promise<unknown> {
    // Blobs first, then the record that refers to them: a crash leaves at worst an unused blob.
    const written = new Set<string>();
    for (const change of changes) {
      const incoming = change.replace ? [...change.replace.entries, ...(change.entries ?? [])] : (change.entries ?? []);
      for (const [, entry] of incoming) {
        if (entry?.kind !== 'file') continue;
        const id = this.#blobId(entry.bytes);
        if (written.has(id) || (this.#refs.get(id) ?? 0) > 0) continue;
        await store.writeBlob(id, entry.bytes);
        written.add(id);
      }
    }
    const sweep = changes.some((c) => c.sweep);
    const limit = Math.max(this.#compactRatio * this.#snapshotBytes, this.#compactMinBytes);
    // A replacement is saved as a new document (it has no journal record).
    if (sweep || changes.some((c) => c.replace) || this.#journalEnd === undefined || this.#journalEnd > limit) {
      return this.#compact(store, changes, sweep);
    }

    const start = this.#journalEnd;
    const records = changes.map((c) => this.#record(c)).filter((r) => r !== undefined);
    const bytes = Buffer.concat(records.map(frame));
    let saveError: unknown;
    if (bytes.byteLength > 0) {
      try {
        await store.appendJournal(start, bytes);
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
          this.#journalEnd = undefined;
          throw err;
        }
        saveError = err;
      }
    }
    this.#journalEnd = start + bytes.byteLength;
    const touched = new Set(written);
    for (const change of changes) this.#applyLive(change, touched);
    // Best effort: a blob left behind is only wasted space (discard sweeps it).
    for (const id of touched) {
      if ((this.#refs.get(id) ?? 0) > 0) continue;
      this.#refs.delete(id);
      if (this.#pinned.has(id)) continue;
      await store.deleteBlob(id).catch(() => {});
    }
    return saveError;
  }

  /** Writes the whole new state as a new document generation, then starts its (empty) journal. */
  async #compact(store: UpperStore, changes: readonly UpperChange[], sweep: boolean): Promise<unknown> {
    let next: UpperSnapshot = this.snapshot();
    for (const change of changes) next = applyTo(next, change);
    const { entries, dirs, opaque } = next;
    const generation = this.#generation + 1;
    const doc = this.#serialize(entries, dirs, opaque, generation);
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
    this.#generation = generation;
    this.#snapshotBytes = doc.byteLength;
    const header = frame({ format: JOURNAL_FORMAT, version: 3, root: this.#root, generation } satisfies JournalHeader);
    this.#continues = false;
    this.#journalEnd = await store.writeJournal(header).then(
      () => header.byteLength,
      // The next save writes a new document again (and retries the journal).
      () => undefined,
    );
    const refs = new Map<string, number>();
    for (const entry of entries.values()) {
      if (entry.kind !== 'file') continue;
      const id = this.#blobId(entry.bytes);
      refs.set(id, (refs.get(id) ?? 0) + 1);
    }
    const unused = [...this.#refs.keys()].filter((id) => !refs.has(id) && !this.#pinned.has(id));
    this.#adoptMaps(next);
    this.#refs = refs;
    this.#reindex();
    for (const id of unused) await store.deleteBlob(id).catch(() => {});
    if (sweep) {
      try {
        for (const id of await store.listBlobs()) if (!refs.has(id) && !this.#pinned.has(id)) await store.deleteBlob(id);
      } catch {
        // The state is saved; stray blobs only waste space until the next sweep.
      }
    }
    return saveError;
  }

  /** Applies a saved change to the live state, keeping blob reference counts and the descendant index. */
  #applyLive(change: UpperChange, touched: Set<string>): void {
    const counted = this.#store !== undefined;
    for (const [key, given] of change.entries ?? []) {
      const old = this.#entries.get(key);
      const entry = given?.kind === 'file' ? this.#intern(given) : given;
      if ((old === undefined) !== (entry === undefined)) this.#child(key, old === undefined ? 1 : -1);
      if (old?.kind === 'file') {
        this.#release(old);
        this.#count(key, -1);
        this.#count(key, -1, true);
        if (counted) {
          const id = this.#blobId(old.bytes);
          this.#refs.set(id, (this.#refs.get(id) ?? 1) - 1);
          touched.add(id);
        }
      }
      if (entry?.kind === 'file') {
        this.#count(key, 1);
        this.#count(key, 1, true);
        if (counted) {
          const id = this.#blobId(entry.bytes);
          this.#refs.set(id, (this.#refs.get(id) ?? 0) + 1);
        }
      }
      // A link holds its directory as a file does.
      for (const [e, delta] of [[old, -1], [entry, 1]] as const) {
        if (e?.kind !== 'link') continue;
        this.#links += delta;
        this.#count(key, delta);
        this.#count(key, delta, true);
      }
      this.#entries = entry ? this.#entries.set(key, entry) : this.#entries.delete(key);
    }
    for (const d of change.addDirs ?? []) {
      if (this.#dirs.has(d)) continue;
      this.#dirs = this.#dirs.add(d);
      this.#count(d, 1);
      this.#child(d, 1);
    }
    for (const d of change.dropDirs ?? []) {
      if (!this.#dirs.has(d)) continue;
      this.#dirs = this.#dirs.delete(d);
      this.#count(d, -1);
      this.#child(d, -1);
    }
    for (const d of change.addOpaque ?? []) {
      if (this.#opaque.has(d)) continue;
      this.#opaque = this.#opaque.add(d);
      this.#child(d, 1);
    }
    for (const d of change.dropOpaque ?? []) {
      if (!this.#opaque.has(d)) continue;
      this.#opaque = this.#opaque.delete(d);
      this.#child(d, -1);
    }
  }

  #count(key: string, delta: number, files = false): void {
    if (key === '/') return;
    let index = files ? this.#filesBelow : this.#below;
    for (let k = posix.dirname(key); ; k = posix.dirname(k)) {
      const n = (index.get(k) ?? 0) + delta;
      index = n === 0 ? index.delete(k) : index.set(k, n);
      if (k === '/' || k === '.') break;
    }
    if (files) this.#filesBelow = index;
    else this.#below = index;
  }

  #child(key: string, delta: number): void {
    if (key === '/') return;
    const parent = posix.dirname(key);
    const n = (this.#children.get(parent) ?? 0) + delta;
    this.#children = n === 0 ? this.#children.delete(parent) : this.#children.set(parent, n);
  }

  /** Rebuilds the indexes and the content table after the maps were replaced. */
  #reindex(): void {
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
    this.#contents = PMap.empty();
    this.#links = 0;
    for (const [key, e] of this.#entries) {
      child(key);
      if (e.kind === 'whiteout') continue;
      count(below, key);
      count(filesBelow, key);
      if (e.kind === 'link') {
        this.#links++;
        continue;
      }
      const shared = this.#intern(e);
      if (shared !== e) this.#entries = this.#entries.set(key, shared);
    }
    for (const d of this.#dirs) (count(below, d), child(d));
    for (const d of this.#opaque) child(d);
    this.#below = PMap.from(below);
    this.#filesBelow = PMap.from(filesBelow);
    this.#children = PMap.from(children);
  }

  /** The entry, referring to the one buffer held for its content (counted). */
  #intern(e: UpperFile): UpperFile {
    const held = this.#contents.get(e.version);
    if (held === undefined || held.bytes.byteLength !== e.bytes.byteLength) {
      if (held === undefined) this.#contents = this.#contents.set(e.version, { bytes: e.bytes, refs: 1 });
      return e;
    }
    this.#contents = this.#contents.set(e.version, { bytes: held.bytes, refs: held.refs + 1 });
    return held.bytes === e.bytes ? e : { ...e, bytes: held.bytes };
  }

  #release(e: UpperFile): void {
    const held = this.#contents.get(e.version);
    if (held === undefined || held.bytes !== e.bytes) return;
    this.#contents = held.refs === 1 ? this.#contents.delete(e.version) : this.#contents.set(e.version, { bytes: held.bytes, refs: held.refs - 1 });
  }

  #docEntry(path: string, e: UpperEntry): DocEntry {
    return {
      path,
      base: e.base ?? null,
      blob: e.kind === 'file' ? this.#blobId(e.bytes) : null,
      ...(e.kind === 'file' ? { mtimeMs: e.mtimeMs } : {}),
      ...(e.kind === 'file' && e.origin
        ? { origin: { path: e.origin.path, ...(e.origin.version === undefined ? {} : { version: e.origin.version }) } }
        : {}),
      ...(e.kind === 'file' && e.executable ? { executable: true as const } : {}),
      ...(e.kind === 'link' ? { link: e.text } : {}),
    };
  }

  #record(change: UpperChange): JournalRecord | undefined {
    const rec: { -readonly [K in keyof JournalRecord]: JournalRecord[K] } = {};
    if (change.entries?.length) {
      rec.entries = change.entries.map(([path, e]) => (e ? this.#docEntry(path, e) : { path, drop: true as const }));
    }
    if (change.addDirs?.length) rec.addDirs = change.addDirs;
    if (change.dropDirs?.length) rec.dropDirs = change.dropDirs;
    if (change.addOpaque?.length) rec.addOpaque = change.addOpaque;
    if (change.dropOpaque?.length) rec.dropOpaque = change.dropOpaque;
    return Object.keys(rec).length === 0 ? undefined : rec;
  }

  #serialize(
    entries: PMap<UpperEntry>,
    dirs: PSet,
    opaque: PSet,
    generation: number,
  ): Uint8Array {
    const doc: StateDocument = {
      format: STATE_FORMAT,
      version: STATE_FORMAT_VERSION,
      root: this.#root,
      generation,
      entries: [...entries].sort(([a], [b]) => compareNames(a, b)).map(([path, e]) => this.#docEntry(path, e)),
      dirs: [...dirs].sort(compareNames),
      opaque: [...opaque].sort(compareNames),
    };
    return Buffer.from(`${JSON.stringify(doc, null, 1)}\n`, 'utf8');
  }

  /** The fork base of a state kept by `store` (its document, and its journal cut at the fork), if any. */
  async #readForkBase(store: UpperStore) {
    const raw = await store.readForkBase?.();
    if (raw === undefined) return undefined;
    const doc = parseDocument(raw.state, store.where);
    const journal = parseJournal(raw.journal, store.where);
    if (journal.end !== raw.journal.byteLength) throw invalid(store.where, 'the fork base\'s journal is cut inside a record');
    return { raw, doc, journal };
  }

  async #load(store: UpperStore): Promise<void> {
    // A writer may write a new document, or drop old blobs, while we read: retry then.
    for (let attempt = 1; ; attempt++) {
      const retry = attempt < 5;
      const raw = await store.readState();
      if (raw === undefined) return;
      const doc = parseDocument(raw, store.where);
      if (doc.root !== this.#root) {
        throw new FsError(
          'FS_INVALID_ARGUMENT',
          `the overlay state in "${store.where}" belongs to a lower rooted at "${doc.root}", not "${this.#root}"`,
        );
      }
      const generation = doc.generation ?? 0;
      const docs = new Map<string, DocEntry>();
      for (const e of doc.entries) docs.set(e.path, e);
      const dirs = new Set(doc.dirs);
      // A version-1 document has no removed directories.
      const opaque = new Set(doc.opaque ?? []);
      let journalEnd: number | undefined;
      let continues = false;
      if (doc.version === 3) {
        const journal = parseJournal((await store.readJournal()) ?? new Uint8Array(0), store.where);
        if (journal.header && journal.header.generation > generation && retry) continue; // a newer document was written meanwhile
        if (journal.header?.generation === generation) {
          if (journal.header.root !== this.#root) throw invalid(store.where, `the journal belongs to a lower rooted at "${journal.header.root}"`);
          if (journal.header.forkBase === true) {
            const base = await this.#readForkBase(store);
            if (base?.journal.header?.generation !== generation) throw invalid(store.where, 'the fork base does not match the fork\'s journal');
            for (const rec of base.journal.records) replay(docs, dirs, opaque, rec);
            continues = true;
          }
          for (const rec of journal.records) replay(docs, dirs, opaque, rec);
          journalEnd = journal.end;
        }
      }
      // Older documents (and a journal of an older generation) get a new document on the first save.
      const pinned = new Set<string>();
      const fork = await this.#readForkBase(store);
      if (fork) {
        // What the fork started from stays readable (changes against the parent) as long as the fork is.
        for (const e of fork.doc.entries) if (e.blob !== null) pinned.add(e.blob);
        for (const rec of fork.journal.records) for (const e of rec.entries ?? []) if (!('drop' in e) && e.blob !== null) pinned.add(e.blob);
        this.#base = async () => {
          const view: UpperStore = {
            where: `${store.where} (fork base)`,
            readState: async () => fork.raw.state,
            readJournal: async () => fork.raw.journal,
            readBlob: (id) => store.readBlob(id),
            writeState: readOnly, writeBlob: readOnly, deleteBlob: readOnly, listBlobs: readOnly, writeJournal: readOnly, appendJournal: readOnly,
          };
          return (await UpperState.open(this.#root, view)).snapshot();
        };
      }
      const entries = new Map<string, UpperEntry>();
      const refs = new Map<string, number>();
      let missing: string | undefined;
      const read = new Map<string, Uint8Array>();
      for (const e of docs.values()) {
        const base = e.base === null ? undefined : FsVersion(e.base);
        if (e.blob === null) {
          entries.set(e.path, typeof e.link === 'string' ? { kind: 'link', text: e.link, base } : { kind: 'whiteout', base });
          continue;
        }
        // A content several entries share is read (and held) once.
        const bytes = read.get(e.blob) ?? (await store.readBlob(e.blob));
        if (bytes === undefined) {
          missing = e.blob;
          break;
        }
        const id = hash('sha256', bytes, 'hex');
        if (id !== e.blob) {
          throw new FsError('FS_IO_ERROR', `overlay blob ${e.blob} in "${store.where}" is corrupt (its content digest is ${id})`);
        }
        blobIds.set(bytes, id);
        read.set(id, bytes);
        refs.set(id, (refs.get(id) ?? 0) + 1);
        const origin = e.origin && { path: e.origin.path, ...(e.origin.version === undefined ? {} : { version: FsVersion(e.origin.version) }) };
        entries.set(e.path, { kind: 'file', bytes, version: contentVersion(bytes), mtimeMs: e.mtimeMs ?? 0, base, ...(origin ? { origin } : {}), ...(e.executable === true ? { executable: true } : {}) });
      }
      if (missing !== undefined) {
        if (retry) continue;
        throw new FsError('FS_IO_ERROR', `overlay blob ${missing} named by the state in "${store.where}" is missing`);
      }
      this.#entries = PMap.from(entries);
      this.#dirs = PSet.from(dirs);
      this.#opaque = PSet.from(opaque);
      this.#refs = refs;
      this.#pinned = pinned;
      this.#reindex();
      this.#generation = generation;
      this.#snapshotBytes = raw.byteLength;
      this.#journalEnd = journalEnd;
      this.#continues = continues;
      return;
    }
  }
}

const readOnly = (): Promise<never> => Promise.reject(new FsError('FS_READ_ONLY', 'a fork base is read-only'));

function applyTo(snap: UpperSnapshot, change: UpperChange): UpperSnapshot {
  let { entries, dirs, opaque } = change.replace ?? snap;
  for (const [key, entry] of change.entries ?? []) entries = entry ? entries.set(key, entry) : entries.delete(key);
  for (const d of change.addDirs ?? []) dirs = dirs.add(d);
  for (const d of change.dropDirs ?? []) dirs = dirs.delete(d);
  for (const d of change.addOpaque ?? []) opaque = opaque.add(d);
  for (const d of change.dropOpaque ?? []) opaque = opaque.delete(d);
  return { entries, dirs, opaque };
}

function replay(entries: Map<string, DocEntry>, dirs: Set<string>, opaque: Set<string>, rec: JournalRecord): void {
  for (const e of rec.entries ?? []) {
    if ('drop' in e) entries.delete(e.path);
    else entries.set(e.path, e);
  }
  for (const d of rec.addDirs ?? []) dirs.add(d);
  for (const d of rec.dropDirs ?? []) dirs.delete(d);
  for (const d of rec.addOpaque ?? []) opaque.add(d);
  for (const d of rec.dropOpaque ?? []) opaque.delete(d);
}

/**
 * One journal record: `<byte length> <first 16 hex of its sha256> <json>\n`. JSON has no raw
 * newline, so records are lines; a line whose length or checksum does not match is torn.
 */
function frame(value: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  return Buffer.concat([Buffer.from(`${json.byteLength} ${checksum(json)} `, 'utf8'), json, Buffer.from('\n')]);
}

function checksum(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'hex').slice(0, 16);
}

/**
 * The header and the whole records of a journal, and where the last whole record ends. Parsing
 * stops at the first torn record (a crash mid-append): it and anything after it are ignored.
 */
export function parseJournal(raw: Uint8Array, where: string): { header?: JournalHeader; records: JournalRecord[]; end: number } {
  const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const records: JournalRecord[] = [];
  let header: JournalHeader | undefined;
  let pos = 0;
  for (;;) {
    const nl = buf.indexOf(10, pos);
    if (nl < 0) break;
    const line = buf.subarray(pos, nl);
    const m = /^(\d{1,10}) ([0-9a-f]{16}) /.exec(line.subarray(0, 40).toString('latin1'));
    if (!m) break;
    const json = line.subarray(m[0].length);
    if (json.byteLength !== Number(m[1]) || checksum(json) !== m[2]) break;
    let value: unknown;
    try {
      value = JSON.parse(json.toString('utf8'));
    } catch {
      break;
    }
    if (header === undefined) {
      const h = value as Partial<JournalHeader> | null;
      if (typeof h !== 'object' || h === null || h.format !== JOURNAL_FORMAT) throw invalid(where, `the journal is not a ${JOURNAL_FORMAT} journal`);
      if (h.version !== 3) throw invalid(where, `unsupported journal version ${String(h.version)}`);
      if (typeof h.root !== 'string' || typeof h.generation !== 'number') throw invalid(where, 'the journal header lacks fields');
      if (h.forkBase !== undefined && h.forkBase !== true) throw invalid(where, 'bad forkBase in the journal header');
      header = h as JournalHeader;
    } else records.push(checkRecord(value, where));
    pos = nl + 1;
  }
  return header === undefined ? { records: [], end: 0 } : { header, records, end: pos };
}

function invalid(where: string, why: string): FsError {
  return new FsError('FS_IO_ERROR', `the overlay state in "${where}" is not valid: ${why}`);
}

function checkRecord(value: unknown, where: string): JournalRecord {
  const r = value as JournalRecord | null;
  const paths = (v: unknown) => v === undefined || (Array.isArray(v) && v.every((p) => typeof p === 'string' && p.startsWith('/')));
  if (typeof r !== 'object' || r === null || !paths(r.addDirs) || !paths(r.dropDirs) || !paths(r.addOpaque) || !paths(r.dropOpaque)) {
    throw invalid(where, `bad journal record ${JSON.stringify(value)}`);
  }
  if (r.entries !== undefined) {
    if (!Array.isArray(r.entries)) throw invalid(where, `bad journal record ${JSON.stringify(value)}`);
    for (const e of r.entries as unknown[]) {
      const d = e as { path?: unknown; drop?: unknown } | null;
      if (typeof d === 'object' && d !== null && d.drop === true && typeof d.path === 'string' && d.path.startsWith('/')) continue;
      checkEntry(e, where);
    }
  }
  return r;
}

function checkEntry(e: unknown, where: string): void {
  const x = e as { path?: unknown; base?: unknown; blob?: unknown; mtimeMs?: unknown; origin?: unknown; executable?: unknown } | null;
  const o = x?.origin as { path?: unknown; version?: unknown } | undefined | null;
  if (
    typeof x !== 'object' ||
    x === null ||
    typeof x.path !== 'string' ||
    !x.path.startsWith('/') ||
    !(x.base === null || typeof x.base === 'string') ||
    !(x.blob === null || typeof x.blob === 'string') ||
    !(x.mtimeMs === undefined || typeof x.mtimeMs === 'number') ||
    !(x.executable === undefined || x.executable === true) ||
    !(o === undefined || (typeof o === 'object' && o !== null && typeof o.path === 'string' && o.path.startsWith('/') &&
      (o.version === undefined || typeof o.version === 'string')))
  ) {
    throw invalid(where, `bad entry ${JSON.stringify(e)}`);
  }
}

function parseDocument(raw: Uint8Array, where: string): StateDocument {
  const bad = (why: string) => invalid(where, why);
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch (err) {
    throw bad(err instanceof Error ? err.message : String(err));
  }
  const d = doc as Partial<StateDocument> | null;
  if (typeof d !== 'object' || d === null || d.format !== STATE_FORMAT) throw bad(`not a ${STATE_FORMAT} document`);
  if (d.version !== 1 && d.version !== 2 && d.version !== 3) throw bad(`unsupported format version ${String(d.version)}`);
  if (typeof d.root !== 'string' || !Array.isArray(d.entries) || !Array.isArray(d.dirs)) throw bad('missing fields');
  if (d.version === 3 && !(typeof d.generation === 'number' && Number.isSafeInteger(d.generation) && d.generation > 0)) {
    throw bad('missing generation');
  }
  for (const e of d.entries as unknown[]) checkEntry(e, where);
  if (!d.dirs.every((p) => typeof p === 'string' && p.startsWith('/'))) throw bad('bad directory list');
  if (d.opaque !== undefined && !(Array.isArray(d.opaque) && d.opaque.every((p) => typeof p === 'string' && p.startsWith('/')))) {
    throw bad('bad removed-directory list');
  }
  return d as StateDocument;
}
