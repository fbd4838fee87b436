import { hash } from 'node:crypto';
import { FsError, FsVersion, compareNames, contentVersion, toFsError } from '../../seam/index.js';
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

export type UpperEntry = UpperFile | UpperWhiteout;

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
}

export const STATE_FORMAT = 'dsh-fs-overlay';
/** 2 adds `origin` on entries and `opaque`; version-1 documents are still read (and saved as 2). */
export const STATE_FORMAT_VERSION = 2;

interface StateDocument {
  readonly format: typeof STATE_FORMAT;
  readonly version: 1 | 2;
  /** The lower's root target key; a state is only reopened over the same root. */
  readonly root: string;
  readonly entries: ReadonlyArray<{
    readonly path: string;
    readonly base: string | null;
    readonly blob: string | null;
    readonly mtimeMs?: number;
    /** Version 2: where a moved file came from. */
    readonly origin?: { readonly path: string; readonly version?: string };
  }>;
  readonly dirs: readonly string[];
  /** Version 2: lower directories removed in the overlay (absent in version 1). */
  readonly opaque?: readonly string[];
}

interface Pending {
  readonly change: UpperChange;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/**
 * The upper layer: files, whiteouts and the directories the overlay made, keyed by the lower's
 * target keys. Held in memory; with a store, every change is saved before it becomes visible.
 */
export class UpperState {
  #entries = new Map<string, UpperEntry>();
  #dirs = new Set<string>();
  #opaque = new Set<string>();
  readonly #store: UpperStore | undefined;
  readonly #root: string;
  #blobs = new Set<string>();
  readonly #ids = new WeakMap<Uint8Array, string>();
  readonly #queue: Pending[] = [];
  #draining = false;

  private constructor(root: string, store: UpperStore | undefined) {
    this.#root = root;
    this.#store = store;
  }

  static async open(root: string, store?: UpperStore): Promise<UpperState> {
    const state = new UpperState(root, store);
    if (store) await state.#load(store);
    return state;
  }

  /** Replaced, never mutated in place, while a store is attached: a caller may hold a snapshot. */
  get entries(): ReadonlyMap<string, UpperEntry> {
    return this.#entries;
  }

  get dirs(): ReadonlySet<string> {
    return this.#dirs;
  }

  /** Lower directories the overlay removed: the lower shows nothing at or below them. */
  get opaque(): ReadonlySet<string> {
    return this.#opaque;
  }

  get persistent(): boolean {
    return this.#store !== undefined;
  }

  /**
   * Applies a change. With a store, changes arriving together are saved as one state document
   * (group commit) and become visible only once saved; a failed save changes nothing.
   */
  apply(change: UpperChange): Promise<void> {
    if (!this.#store) {
      applyTo(this.#entries, this.#dirs, this.#opaque, change);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ change, resolve, reject });
      if (!this.#draining) void this.#drain(this.#store!);
    });
  }

  /** Deletes every stored blob no entry refers to (e.g. left by a crash between two saves). */
  sweep(): Promise<void> {
    // Queued like a change, so no save is writing a blob it has not yet referred to meanwhile.
    return this.#store ? this.apply({ sweep: true }) : Promise.resolve();
  }

  #blobId(bytes: Uint8Array): string {
    let id = this.#ids.get(bytes);
    if (id === undefined) {
      id = hash('sha256', bytes, 'hex');
      this.#ids.set(bytes, id);
    }
    return id;
  }

  async #drain(store: UpperStore): Promise<void> {
    this.#draining = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0);
        try {
          const entries = new Map(this.#entries);
          const dirs = new Set(this.#dirs);
          const opaque = new Set(this.#opaque);
          for (const { change } of batch) applyTo(entries, dirs, opaque, change);
          const blobs = new Set<string>();
          // Blobs first, then the document that refers to them: a crash leaves at worst an unused blob.
          for (const entry of entries.values()) {
            if (entry.kind !== 'file') continue;
            const id = this.#blobId(entry.bytes);
            if (blobs.has(id)) continue;
            blobs.add(id);
            if (!this.#blobs.has(id)) await store.writeBlob(id, entry.bytes);
          }
          const doc = this.#serialize(entries, dirs, opaque);
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
          const unused = [...this.#blobs].filter((id) => !blobs.has(id));
          this.#entries = entries;
          this.#dirs = dirs;
          this.#opaque = opaque;
          this.#blobs = blobs;
          // Best effort: a blob left behind is only wasted space (discard sweeps it).
          for (const id of unused) await store.deleteBlob(id).catch(() => {});
          if (batch.some(({ change }) => change.sweep)) {
            try {
              for (const id of await store.listBlobs()) if (!blobs.has(id)) await store.deleteBlob(id);
            } catch {
              // The state is saved; stray blobs only waste space until the next sweep.
            }
          }
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

  #serialize(entries: ReadonlyMap<string, UpperEntry>, dirs: ReadonlySet<string>, opaque: ReadonlySet<string>): Uint8Array {
    const doc: StateDocument = {
      format: STATE_FORMAT,
      version: STATE_FORMAT_VERSION,
      root: this.#root,
      entries: [...entries]
        .sort(([a], [b]) => compareNames(a, b))
        .map(([path, e]) => ({
          path,
          base: e.base ?? null,
          blob: e.kind === 'file' ? this.#blobId(e.bytes) : null,
          ...(e.kind === 'file' ? { mtimeMs: e.mtimeMs } : {}),
          ...(e.kind === 'file' && e.origin
            ? { origin: { path: e.origin.path, ...(e.origin.version === undefined ? {} : { version: e.origin.version }) } }
            : {}),
        })),
      dirs: [...dirs].sort(compareNames),
      opaque: [...opaque].sort(compareNames),
    };
    return Buffer.from(`${JSON.stringify(doc, null, 1)}\n`, 'utf8');
  }

  async #load(store: UpperStore): Promise<void> {
    // A writer may replace the document and drop old blobs while we read: retry on a vanished blob.
    for (let attempt = 1; ; attempt++) {
      const raw = await store.readState();
      if (raw === undefined) return;
      const doc = parseDocument(raw, store.where);
      if (doc.root !== this.#root) {
        throw new FsError(
          'FS_INVALID_ARGUMENT',
          `the overlay state in "${store.where}" belongs to a lower rooted at "${doc.root}", not "${this.#root}"`,
        );
      }
      const entries = new Map<string, UpperEntry>();
      const blobs = new Set<string>();
      let missing: string | undefined;
      for (const e of doc.entries) {
        const base = e.base === null ? undefined : FsVersion(e.base);
        if (e.blob === null) {
          entries.set(e.path, { kind: 'whiteout', base });
          continue;
        }
        const bytes = await store.readBlob(e.blob);
        if (bytes === undefined) {
          missing = e.blob;
          break;
        }
        const id = hash('sha256', bytes, 'hex');
        if (id !== e.blob) {
          throw new FsError('FS_IO_ERROR', `overlay blob ${e.blob} in "${store.where}" is corrupt (its content digest is ${id})`);
        }
        this.#ids.set(bytes, id);
        blobs.add(id);
        const origin = e.origin && { path: e.origin.path, ...(e.origin.version === undefined ? {} : { version: FsVersion(e.origin.version) }) };
        entries.set(e.path, { kind: 'file', bytes, version: contentVersion(bytes), mtimeMs: e.mtimeMs ?? 0, base, ...(origin ? { origin } : {}) });
      }
      if (missing !== undefined) {
        if (attempt < 5) continue;
        throw new FsError('FS_IO_ERROR', `overlay blob ${missing} named by the state in "${store.where}" is missing`);
      }
      this.#entries = entries;
      this.#dirs = new Set(doc.dirs);
      // A version-1 document has no removed directories; the next save writes version 2.
      this.#opaque = new Set(doc.opaque ?? []);
      this.#blobs = blobs;
      return;
    }
  }
}

function applyTo(entries: Map<string, UpperEntry>, dirs: Set<string>, opaque: Set<string>, change: UpperChange): void {
  for (const [key, entry] of change.entries ?? []) {
    if (entry) entries.set(key, entry);
    else entries.delete(key);
  }
  for (const d of change.addDirs ?? []) dirs.add(d);
  for (const d of change.dropDirs ?? []) dirs.delete(d);
  for (const d of change.addOpaque ?? []) opaque.add(d);
  for (const d of change.dropOpaque ?? []) opaque.delete(d);
}

function parseDocument(raw: Uint8Array, where: string): StateDocument {
  const bad = (why: string) => new FsError('FS_IO_ERROR', `the overlay state in "${where}" is not valid: ${why}`);
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch (err) {
    throw bad(err instanceof Error ? err.message : String(err));
  }
  const d = doc as Partial<StateDocument> | null;
  if (typeof d !== 'object' || d === null || d.format !== STATE_FORMAT) throw bad(`not a ${STATE_FORMAT} document`);
  if (d.version !== 1 && d.version !== 2) throw bad(`unsupported format version ${String(d.version)}`);
  if (typeof d.root !== 'string' || !Array.isArray(d.entries) || !Array.isArray(d.dirs)) throw bad('missing fields');
  for (const e of d.entries as unknown[]) {
    const x = e as { path?: unknown; base?: unknown; blob?: unknown; mtimeMs?: unknown; origin?: unknown } | null;
    const o = x?.origin as { path?: unknown; version?: unknown } | undefined | null;
    if (
      typeof x !== 'object' ||
      x === null ||
      typeof x.path !== 'string' ||
      !x.path.startsWith('/') ||
      !(x.base === null || typeof x.base === 'string') ||
      !(x.blob === null || typeof x.blob === 'string') ||
      !(x.mtimeMs === undefined || typeof x.mtimeMs === 'number') ||
      !(o === undefined || (typeof o === 'object' && o !== null && typeof o.path === 'string' && o.path.startsWith('/') &&
        (o.version === undefined || typeof o.version === 'string')))
    ) {
      throw bad(`bad entry ${JSON.stringify(e)}`);
    }
  }
  if (!d.dirs.every((p) => typeof p === 'string' && p.startsWith('/'))) throw bad('bad directory list');
  if (d.opaque !== undefined && !(Array.isArray(d.opaque) && d.opaque.every((p) => typeof p === 'string' && p.startsWith('/')))) {
    throw bad('bad removed-directory list');
  }
  return d as StateDocument;
}
