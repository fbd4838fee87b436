import { hash } from 'node:crypto';
import { compareNames } from '../../seam/index.js';
import type { PMap, PSet } from './pmap.js';
import type { UpperChange, UpperEntry } from './state-types.js';

export const STATE_FORMAT = 'dsh-fs-overlay';
/**
 * 3 adds `generation` and the journal (overlay.journal) of changes since the document; 2 added
 * `origin` on entries and `opaque`. Version-1 and -2 documents are still read (and saved as 3).
 */
export const STATE_FORMAT_VERSION = 3;
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
}

export interface StateDocument {
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
export interface JournalHeader {
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
export interface JournalRecord {
  readonly entries?: ReadonlyArray<DocEntry | { readonly path: string; readonly drop: true }>;
  readonly addDirs?: readonly string[];
  readonly dropDirs?: readonly string[];
  readonly addOpaque?: readonly string[];
  readonly dropOpaque?: readonly string[];
}

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
  const header: JournalHeader = { format: JOURNAL_FORMAT, version: 3, root, generation, ...(forkBase ? { forkBase: true } : {}) };
  return frame(header);
}

function docEntry(path: string, e: UpperEntry): DocEntry {
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
  };
}

/** The journal record of a change; undefined when it changes nothing the journal keeps. */
export function journalRecord(change: UpperChange): JournalRecord | undefined {
  const rec: { -readonly [K in keyof JournalRecord]: JournalRecord[K] } = {};
  if (change.entries?.length) {
    rec.entries = change.entries.map(([path, e]) => (e ? docEntry(path, e) : { path, drop: true as const }));
  }
  if (change.addDirs?.length) rec.addDirs = change.addDirs;
  if (change.dropDirs?.length) rec.dropDirs = change.dropDirs;
  if (change.addOpaque?.length) rec.addOpaque = change.addOpaque;
  if (change.dropOpaque?.length) rec.dropOpaque = change.dropOpaque;
  return Object.keys(rec).length === 0 ? undefined : rec;
}

/** The state document of a layer, as written: sorted, so the same layer always gives the same bytes. */
export function serialize(root: string, entries: PMap<UpperEntry>, dirs: PSet, opaque: PSet, generation: number): Uint8Array {
  const doc: StateDocument = {
    format: STATE_FORMAT,
    version: STATE_FORMAT_VERSION,
    root,
    generation,
    entries: [...entries].sort(([a], [b]) => compareNames(a, b)).map(([path, e]) => docEntry(path, e)),
    dirs: [...dirs].sort(compareNames),
    opaque: [...opaque].sort(compareNames),
  };
  return Buffer.from(`${JSON.stringify(doc, null, 1)}\n`, 'utf8');
}
