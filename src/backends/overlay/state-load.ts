import { hash } from 'node:crypto';
import { FsError, FsVersion, contentVersion } from '../../seam/index.js';
import { PMap, PSet } from './pmap.js';
import type { UpperStore } from './store.js';
import { createContext, type UpperContext } from './state-context.js';
import { rememberBlobId, type DocEntry, type JournalRecord, type StateDocument } from './state-format.js';
import { layerSnapshot, reindex } from './state-index.js';
import { invalid, parseDocument, parseJournal } from './state-parse.js';
import type { UpperEntry, UpperSnapshot } from './state-types.js';

const readOnly = (): Promise<never> => Promise.reject(new FsError('FS_READ_ONLY', 'a fork base is read-only'));

/** The saved layer as its document and journal describe it, entries still as written. */
interface SavedLayer {
  readonly docs: Map<string, DocEntry>;
  readonly dirs: Set<string>;
  readonly opaque: Set<string>;
  readonly journalEnd: number | undefined;
  readonly continues: boolean;
}

type ForkBase = NonNullable<Awaited<ReturnType<typeof readForkBase>>>;

/** Loads the state `store` keeps into a fresh context (`cx` as createContext made it). */
export async function load(cx: UpperContext, store: UpperStore): Promise<void> {
  // A writer may write a new document, or drop old blobs, while we read: retry then.
  for (let attempt = 1; ; attempt++) {
    const retry = attempt < 5;
    const raw = await store.readState();
    if (raw === undefined) return;
    const doc = parseDocument(raw, store.where);
    if (doc.root !== cx.root) {
      throw new FsError(
        'FS_INVALID_ARGUMENT',
        `the overlay state in "${store.where}" belongs to a lower rooted at "${doc.root}", not "${cx.root}"`,
      );
    }
    const generation = doc.generation ?? 0;
    const saved = await readSaved(cx.root, store, doc, generation, retry);
    if (saved === undefined) continue; // a newer document was written meanwhile
    // Older documents (and a journal of an older generation) get a new document on the first save.
    const pinned = new Set<string>();
    const fork = await readForkBase(store);
    if (fork) {
      pinForkBase(fork, pinned);
      cx.base = forkBaseLoader(cx.root, store, fork);
    }
    const read = await readEntries(store, saved.docs);
    if ('missing' in read) {
      if (retry) continue;
      throw new FsError('FS_IO_ERROR', `overlay blob ${read.missing} named by the state in "${store.where}" is missing`);
    }
    cx.live.entries = PMap.from(read.entries);
    cx.live.dirs = PSet.from(saved.dirs);
    cx.live.opaque = PSet.from(saved.opaque);
    cx.refs = read.refs;
    cx.pinned = pinned;
    reindex(cx.live);
    cx.generation = generation;
    cx.snapshotBytes = raw.byteLength;
    cx.journalEnd = saved.journalEnd;
    cx.continues = saved.continues;
    return;
  }
}

/** The document with its journal (and a fork's base journal) replayed; undefined when a newer document is to be read first. */
async function readSaved(root: string, store: UpperStore, doc: StateDocument, generation: number, retry: boolean): Promise<SavedLayer | undefined> {
  const docs = new Map<string, DocEntry>();
  for (const e of doc.entries) docs.set(e.path, e);
  const dirs = new Set(doc.dirs);
  // A version-1 document has no removed directories.
  const opaque = new Set(doc.opaque ?? []);
  let journalEnd: number | undefined;
  let continues = false;
  if (doc.version === 3) {
    const journal = parseJournal((await store.readJournal()) ?? new Uint8Array(0), store.where);
    if (journal.header && journal.header.generation > generation && retry) return undefined;
    if (journal.header?.generation === generation) {
      if (journal.header.root !== root) throw invalid(store.where, `the journal belongs to a lower rooted at "${journal.header.root}"`);
      if (journal.header.forkBase === true) {
        const base = await readForkBase(store);
        if (base?.journal.header?.generation !== generation) throw invalid(store.where, 'the fork base does not match the fork\'s journal');
        for (const rec of base.journal.records) replay(docs, dirs, opaque, rec);
        continues = true;
      }
      for (const rec of journal.records) replay(docs, dirs, opaque, rec);
      journalEnd = journal.end;
    }
  }
  return { docs, dirs, opaque, journalEnd, continues };
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

/** The fork base of a state kept by `store` (its document, and its journal cut at the fork), if any. */
async function readForkBase(store: UpperStore) {
  const raw = await store.readForkBase?.();
  if (raw === undefined) return undefined;
  const doc = parseDocument(raw.state, store.where);
  const journal = parseJournal(raw.journal, store.where);
  if (journal.end !== raw.journal.byteLength) throw invalid(store.where, 'the fork base\'s journal is cut inside a record');
  return { raw, doc, journal };
}

/** Adds to `pinned` every blob the fork base names. */
function pinForkBase(fork: ForkBase, pinned: Set<string>): void {
  // What the fork started from stays readable (changes against the parent) as long as the fork is.
  for (const e of fork.doc.entries) if (e.blob !== null) pinned.add(e.blob);
  for (const rec of fork.journal.records) for (const e of rec.entries ?? []) if (!('drop' in e) && e.blob !== null) pinned.add(e.blob);
}

/** Loads the fork base's layer, read-only, through `store`'s blobs. */
function forkBaseLoader(root: string, store: UpperStore, fork: ForkBase): () => Promise<UpperSnapshot> {
  return async () => {
    const view: UpperStore = {
      where: `${store.where} (fork base)`,
      readState: async () => fork.raw.state,
      readJournal: async () => fork.raw.journal,
      readBlob: (id) => store.readBlob(id),
      writeState: readOnly, writeBlob: readOnly, deleteBlob: readOnly, listBlobs: readOnly, writeJournal: readOnly, appendJournal: readOnly,
    };
    const cx = createContext(root, view, {});
    await load(cx, view);
    return layerSnapshot(cx.live);
  };
}

/** The entries with their contents read (and checked); `missing` names a blob the store lacks. */
async function readEntries(
  store: UpperStore,
  docs: Map<string, DocEntry>,
): Promise<{ entries: Map<string, UpperEntry>; refs: Map<string, number> } | { missing: string }> {
  const entries = new Map<string, UpperEntry>();
  const refs = new Map<string, number>();
  const read = new Map<string, Uint8Array>();
  for (const e of docs.values()) {
    const base = e.base === null ? undefined : FsVersion(e.base);
    if (e.blob === null) {
      entries.set(e.path, typeof e.link === 'string' ? { kind: 'link', text: e.link, base } : { kind: 'whiteout', base });
      continue;
    }
    // A content several entries share is read (and held) once.
    const bytes = read.get(e.blob) ?? (await store.readBlob(e.blob));
    if (bytes === undefined) return { missing: e.blob };
    const id = hash('sha256', bytes, 'hex');
    if (id !== e.blob) {
      throw new FsError('FS_IO_ERROR', `overlay blob ${e.blob} in "${store.where}" is corrupt (its content digest is ${id})`);
    }
    rememberBlobId(bytes, id);
    read.set(id, bytes);
    refs.set(id, (refs.get(id) ?? 0) + 1);
    const origin = e.origin && { path: e.origin.path, ...(e.origin.version === undefined ? {} : { version: FsVersion(e.origin.version) }) };
    entries.set(e.path, { kind: 'file', bytes, version: contentVersion(bytes), mtimeMs: e.mtimeMs ?? 0, base, ...(origin ? { origin } : {}), ...(e.executable === true ? { executable: true } : {}) });
  }
  return { entries, refs };
}
