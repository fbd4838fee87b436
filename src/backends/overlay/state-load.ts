import { hash } from 'node:crypto';
import { FsError } from '../../seam/index.js';
import type { UpperStore } from './store.js';
import { createContext, type UpperContext } from './state-context.js';
import { STATE_FORMAT_VERSION, type DocEntry, type JournalRecord, type StateDocument } from './state-format.js';
import { layerSnapshot, reindex } from './state-index.js';
import { invalid, parseDocument, parseJournal } from './state-parse.js';
import { buildState, type SavedState } from './state-replay.js';
import type { UpperSnapshot } from './state-types.js';

const readOnly = (): Promise<never> => Promise.reject(new FsError('FS_READ_ONLY', 'a fork base is read-only'));

/** The saved state, and where the journal stands. */
interface SavedLayer extends SavedState {
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
    const built = await buildState(store, saved, { keep: cx.keep, keepBytes: cx.keepBytes });
    if ('missing' in built) {
      if (retry) continue;
      throw new FsError('FS_IO_ERROR', `overlay blob ${built.missing} named by the state in "${store.where}" is missing`);
    }
    cx.live.entries = built.layer.entries;
    cx.live.dirs = built.layer.dirs;
    cx.live.opaque = built.layer.opaque;
    cx.refs = built.refs;
    cx.history = built.history;
    cx.nextId = built.nextId;
    cx.pinned = pinned;
    reindex(cx.live);
    cx.generation = generation;
    cx.snapshotBytes = raw.byteLength;
    cx.journalEnd = saved.journalEnd;
    cx.continues = saved.continues;
    return;
  }
}

/** The document with its journal's records (and a fork's base journal's); undefined when a newer document is to be read first. */
async function readSaved(root: string, store: UpperStore, doc: StateDocument, generation: number, retry: boolean): Promise<SavedLayer | undefined> {
  const docs = new Map<string, DocEntry>();
  for (const e of doc.entries) docs.set(e.path, e);
  const records: JournalRecord[] = [];
  let journalEnd: number | undefined;
  let continues = false;
  if (doc.version >= 3) {
    const journal = parseJournal((await store.readJournal()) ?? new Uint8Array(0), store.where);
    if (journal.header && journal.header.generation > generation && retry) return undefined;
    if (journal.header?.generation === generation) {
      if (journal.header.root !== root) throw invalid(store.where, `the journal belongs to a lower rooted at "${journal.header.root}"`);
      if (journal.header.forkBase === true) {
        const base = await readForkBase(store);
        if (base?.journal.header?.generation !== generation) throw invalid(store.where, 'the fork base does not match the fork\'s journal');
        records.push(...base.journal.records);
        continues = true;
      }
      // A crash may have kept records of deferred saves without their blobs: the journal ends before the first.
      const kept = await unsettledCut(store, journal.records);
      records.push(...journal.records.slice(0, kept));
      // A document of an older version is saved anew by the first save (with checkpoints, contents inline).
      journalEnd = doc.version !== STATE_FORMAT_VERSION ? undefined : kept < journal.records.length ? journal.starts[kept] : journal.end;
    }
  }
  // A version-1 document has no removed directories.
  const layer = { docs, dirs: new Set(doc.dirs), opaque: new Set(doc.opaque ?? []) };
  return { ...layer, history: doc.history ?? [], checkpoint: doc.checkpoint ?? 0, records, journalEnd, continues };
}

/**
 * How many of the journal's records to keep: all but the first written lazily (by a deferred
 * save) whose blob is missing or damaged, and those after it. Only records after the last flushed
 * one (a flushed save's, or the `settled` mark of a flush) can be such: a flushed append flushes
 * every blob before it, and no blob they name can have been deleted since. A damaged blob is
 * deleted, so that saving the same content again writes it anew.
 */
async function unsettledCut(store: UpperStore, records: readonly JournalRecord[]): Promise<number> {
  let from = records.length;
  while (from > 0 && records[from - 1]!.lazy === true) from--;
  for (let i = from; i < records.length; i++) {
    for (const e of records[i]!.entries ?? []) {
      // A content inline in the record is checked with the record (its frame's checksum).
      if ('drop' in e || e.blob === null || e.data !== undefined) continue;
      const bytes = await store.readBlob(e.blob);
      if (bytes !== undefined && hash('sha256', bytes, 'hex') === e.blob) continue;
      if (bytes !== undefined) await store.deleteBlob(e.blob).catch(() => undefined);
      return i;
    }
  }
  return records.length;
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
    const cx = createContext(root, view, { keepCheckpoints: 0 });
    await load(cx, view);
    return layerSnapshot(cx.live);
  };
}
