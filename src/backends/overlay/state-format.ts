import { hash } from 'node:crypto';
import { compareNames } from '../../seam/index.js';
import type { PMap, PSet } from './pmap.js';
import type { UpperChange, UpperEntry } from './state-types.js';

export const STATE_FORMAT = 'dsh-fs-overlay';
/**
 * 5 writes small contents inline (`data` on entries; journal version 5). 4 added checkpoints:
 * `checkpoint` and `history` in the document, `cp` on journal records (journal version 4). 3 added `generation` and the journal (overlay.journal) of changes since the
 * document; 2 added `origin` on entries and `opaque`. Versions 1 to 4 are still read (and saved as 5).
 */
export const STATE_FORMAT_VERSION = 5;
export const JOURNAL_FORMAT_VERSION = 5;
export const JOURNAL_FORMAT = 'dsh-fs-overlay-journal';

/** An entry as the state document and the journal write it. */
export interface DocEntry {
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
  /** Version 5: the content itself (base64), for a content of at most INLINE_MAX_BYTES; `blob` is still its digest. */
  readonly data?: string;
  /** The lower's content at `base` (base64), when kept (UpperFile.baseBytes); older documents have none. */
  readonly baseData?: string;
}

export interface StateDocument {
  readonly format: typeof STATE_FORMAT;
  readonly version: 1 | 2 | 3 | 4 | 5;
  /** The lower's root target key; a state is only reopened over the same root. */
  readonly root: string;
  /** Version 3: the journal whose header names this generation applies on top of this document. */
  readonly generation?: number;
  readonly entries: readonly DocEntry[];
  readonly dirs: readonly string[];
  /** Version 2: lower directories removed in the overlay (absent in version 1). */
  readonly opaque?: readonly string[];
  /** Version 4: the id of the last checkpoint recorded before this document (0: none). */
  readonly checkpoint?: number;
  /** Version 4: the checkpoints kept, oldest first; the last one's layer is this document's. */
  readonly history?: readonly DocCheckpoint[];
}

/** The label of the checkpoint a journal record makes. */
export interface CheckpointStamp {
  readonly id: number;
  readonly time: number;
  readonly owner?: string;
  readonly source?: string;
  /**
   * Journal records only: keeping this checkpoint dropped every one before `from` (their blobs
   * may be gone), so reopening does not read them.
   */
  readonly from?: number;
}

/**
 * A checkpoint in the document. `undo` takes the layer of this checkpoint back to the previous
 * one's (absent for the oldest kept): the document holds the newest layer and walks back.
 */
export interface DocCheckpoint extends CheckpointStamp {
  readonly paths: readonly string[];
  readonly undo?: JournalRecord;
}

/** The first record of a journal. */
export interface JournalHeader {
  readonly format: typeof JOURNAL_FORMAT;
  readonly version: 3 | 4 | 5;
  readonly root: string;
  readonly generation: number;
  /**
   * A fork's first journal: the records of the fork base's journal (UpperStore.readForkBase) come
   * first, then this journal's own. Absent in every other journal (and in older ones).
   */
  readonly forkBase?: true;
}

/** One applied UpperChange. `drop` entries show the lower again. */
export interface JournalRecord {
  readonly entries?: ReadonlyArray<DocEntry | { readonly path: string; readonly drop: true }>;
  readonly addDirs?: readonly string[];
  readonly dropDirs?: readonly string[];
  readonly addOpaque?: readonly string[];
  readonly dropOpaque?: readonly string[];
  /** Version 4: the checkpoint this change records. */
  readonly cp?: CheckpointStamp;
  /**
   * Written by a deferred save, not flushed with its blobs: after a crash the record may be on
   * disk without them, and loading cuts the journal at the first such record whose blob is
   * missing or damaged (as at a torn record).
   */
  readonly lazy?: true;
  /** A record that changes nothing: every record before it, and every blob they name, is on disk. */
  readonly settled?: true;
}

export const SETTLED: JournalRecord = { settled: true };

/**
 * Contents up to this size are written into the records and documents that name them, not as
 * blob files: creating a file costs far more than a few hundred bytes more in an append, and a
 * program that writes many small files would otherwise create one per write. Only larger contents
 * are stored blobs, counted in `refs`, shared with forks and deleted when unused.
 */
export const INLINE_MAX_BYTES = 4096;

/** Whether a content is kept as a blob file (larger than INLINE_MAX_BYTES) rather than inline. */
export const isStored = (bytes: Uint8Array): boolean => bytes.byteLength > INLINE_MAX_BYTES;

/** Each content's digest, cached on its bytes (shared by forks, which share the bytes). */
const blobIds = new WeakMap<Uint8Array, string>();

/** The name a content is stored under: its sha256. */
export function blobId(bytes: Uint8Array): string {
  let id = blobIds.get(bytes);
  if (id === undefined) {
    id = hash('sha256', bytes, 'hex');
    blobIds.set(bytes, id);
  }
  return id;
}

/** Caches a digest already computed (for a blob checked as it was read). */
export function rememberBlobId(bytes: Uint8Array, id: string): void {
  blobIds.set(bytes, id);
}

/**
 * One journal record: `<byte length> <first 16 hex of its sha256> <json>\n`. JSON has no raw
 * newline, so records are lines; a line whose length or checksum does not match is torn.
 */
export function frame(value: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  return Buffer.concat([Buffer.from(`${json.byteLength} ${checksum(json)} `, 'utf8'), json, Buffer.from('\n')]);
}

export function checksum(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'hex').slice(0, 16);
}

/** A journal's first record, framed; `forkBase` for a fork's first journal. */
export function journalHeader(root: string, generation: number, forkBase = false): Buffer {
  const header: JournalHeader = { format: JOURNAL_FORMAT, version: JOURNAL_FORMAT_VERSION, root, generation, ...(forkBase ? { forkBase: true } : {}) };
  return frame(header);
}

export function docEntry(path: string, e: UpperEntry): DocEntry {
  return {
    path,
    base: e.base ?? null,
    blob: e.kind === 'file' ? blobId(e.bytes) : null,
    ...(e.kind === 'file' ? { mtimeMs: e.mtimeMs } : {}),
    ...(e.kind === 'file' && e.origin
      ? { origin: { path: e.origin.path, ...(e.origin.version === undefined ? {} : { version: e.origin.version }) } }
      : {}),
    ...(e.kind === 'file' && e.executable ? { executable: true as const } : {}),
    ...(e.kind === 'link' ? { link: e.text } : {}),
    ...(e.kind === 'file' && !isStored(e.bytes) ? { data: Buffer.from(e.bytes.buffer, e.bytes.byteOffset, e.bytes.byteLength).toString('base64') } : {}),
    ...(e.kind === 'file' && e.baseBytes ? { baseData: Buffer.from(e.baseBytes.buffer, e.baseBytes.byteOffset, e.baseBytes.byteLength).toString('base64') } : {}),
  };
}

/** The journal record of a change; undefined when it changes nothing the journal keeps. */
export function journalRecord(change: UpperChange, cp?: CheckpointStamp, lazy = false): JournalRecord | undefined {
  const rec: { -readonly [K in keyof JournalRecord]: JournalRecord[K] } = {};
  if (change.entries?.length) {
    rec.entries = change.entries.map(([path, e]) => (e ? docEntry(path, e) : { path, drop: true as const }));
  }
  if (change.addDirs?.length) rec.addDirs = change.addDirs;
  if (change.dropDirs?.length) rec.dropDirs = change.dropDirs;
  if (change.addOpaque?.length) rec.addOpaque = change.addOpaque;
  if (change.dropOpaque?.length) rec.dropOpaque = change.dropOpaque;
  if (Object.keys(rec).length === 0) return undefined;
  if (cp) rec.cp = cp;
  if (lazy) rec.lazy = true;
  return rec;
}

/** The state document of a layer, as written: sorted, so the same layer always gives the same bytes. */
export function serialize(
  root: string,
  { entries, dirs, opaque }: { entries: PMap<UpperEntry>; dirs: PSet; opaque: PSet },
  generation: number,
  history: { readonly checkpoint: number; readonly history: readonly DocCheckpoint[] },
): Uint8Array {
  const doc: StateDocument = {
    format: STATE_FORMAT,
    version: STATE_FORMAT_VERSION,
    root,
    generation,
    entries: [...entries].sort(([a], [b]) => compareNames(a, b)).map(([path, e]) => docEntry(path, e)),
    dirs: [...dirs].sort(compareNames),
    opaque: [...opaque].sort(compareNames),
    checkpoint: history.checkpoint,
    history: history.history,
  };
  return Buffer.from(`${JSON.stringify(doc, null, 1)}\n`, 'utf8');
}
