import { FsError } from '../../seam/index.js';
import { JOURNAL_FORMAT, STATE_FORMAT, checksum, type JournalHeader, type JournalRecord, type StateDocument } from './state-format.js';

/**
 * The header and the whole records of a journal, and where the last whole record ends. Parsing
 * stops at the first torn record (a crash mid-append): it and anything after it are ignored.
 */
export function parseJournal(raw: Uint8Array, where: string): { header?: JournalHeader; records: JournalRecord[]; starts: number[]; end: number } {
  const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const records: JournalRecord[] = [];
  // Where each record begins: where the journal is cut to drop it and what follows.
  const starts: number[] = [];
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
      if (h.version !== 3 && h.version !== 4 && h.version !== 5) throw invalid(where, `unsupported journal version ${String(h.version)}`);
      if (typeof h.root !== 'string' || typeof h.generation !== 'number') throw invalid(where, 'the journal header lacks fields');
      if (h.forkBase !== undefined && h.forkBase !== true) throw invalid(where, 'bad forkBase in the journal header');
      header = h as JournalHeader;
    } else {
      records.push(checkRecord(value, where));
      starts.push(pos);
    }
    pos = nl + 1;
  }
  return header === undefined ? { records: [], starts: [], end: 0 } : { header, records, starts, end: pos };
}

export function invalid(where: string, why: string): FsError {
  return new FsError('FS_IO_ERROR', `the overlay state in "${where}" is not valid: ${why}`);
}

function checkRecord(value: unknown, where: string): JournalRecord {
  const r = value as JournalRecord | null;
  const paths = (v: unknown) => v === undefined || (Array.isArray(v) && v.every((p) => typeof p === 'string' && p.startsWith('/')));
  if (typeof r !== 'object' || r === null || !paths(r.addDirs) || !paths(r.dropDirs) || !paths(r.addOpaque) || !paths(r.dropOpaque)) {
    throw invalid(where, `bad journal record ${JSON.stringify(value)}`);
  }
  if ((r.cp !== undefined && !isStamp(r.cp)) || (r.lazy !== undefined && r.lazy !== true) || (r.settled !== undefined && r.settled !== true)) throw invalid(where, `bad journal record ${JSON.stringify(value)}`);
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

function isStamp(v: unknown): boolean {
  const c = v as { id?: unknown; time?: unknown; owner?: unknown; source?: unknown; from?: unknown } | null;
  return (
    typeof c === 'object' && c !== null && Number.isSafeInteger(c.id) && (c.id as number) > 0 && typeof c.time === 'number' &&
    (c.owner === undefined || typeof c.owner === 'string') && (c.source === undefined || typeof c.source === 'string') &&
    (c.from === undefined || Number.isSafeInteger(c.from))
  );
}

/** A document's checkpoints (version 4), checked: stamps with increasing ids, paths, undo records. */
function checkHistory(d: Partial<StateDocument>, where: string): void {
  if (d.checkpoint !== undefined && !(Number.isSafeInteger(d.checkpoint) && d.checkpoint >= 0)) throw invalid(where, 'bad checkpoint counter');
  if (d.history === undefined) return;
  if (!Array.isArray(d.history)) throw invalid(where, 'bad checkpoint list');
  let last = 0;
  for (const c of d.history as unknown[]) {
    const h = c as { id: number; paths?: unknown; undo?: unknown };
    const paths = Array.isArray(h?.paths) && h.paths.every((p) => typeof p === 'string' && p.startsWith('/'));
    if (!isStamp(c) || h.id <= last || !paths) throw invalid(where, `bad checkpoint ${JSON.stringify(c)}`);
    if (h.undo !== undefined) checkRecord(h.undo, where);
    last = h.id;
  }
}

function checkEntry(e: unknown, where: string): void {
  const x = e as { path?: unknown; base?: unknown; blob?: unknown; mtimeMs?: unknown; origin?: unknown; executable?: unknown; data?: unknown; baseData?: unknown } | null;
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
    !(x.data === undefined || (typeof x.blob === 'string' && typeof x.data === 'string' && BASE64.test(x.data))) ||
    !(x.baseData === undefined || (typeof x.blob === 'string' && typeof x.baseData === 'string' && BASE64.test(x.baseData))) ||
    !(o === undefined || (typeof o === 'object' && o !== null && typeof o.path === 'string' && o.path.startsWith('/') &&
      (o.version === undefined || typeof o.version === 'string')))
  ) {
    throw invalid(where, `bad entry ${JSON.stringify(e)}`);
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function parseDocument(raw: Uint8Array, where: string): StateDocument {
  const bad = (why: string) => invalid(where, why);
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch (err) {
    throw bad(err instanceof Error ? err.message : String(err));
  }
  const d = doc as Partial<StateDocument> | null;
  if (typeof d !== 'object' || d === null || d.format !== STATE_FORMAT) throw bad(`not a ${STATE_FORMAT} document`);
  if (d.version !== 1 && d.version !== 2 && d.version !== 3 && d.version !== 4 && d.version !== 5) throw bad(`unsupported format version ${String(d.version)}`);
  if (typeof d.root !== 'string' || !Array.isArray(d.entries) || !Array.isArray(d.dirs)) throw bad('missing fields');
  if (d.version >= 3 && !(typeof d.generation === 'number' && Number.isSafeInteger(d.generation) && d.generation > 0)) {
    throw bad('missing generation');
  }
  for (const e of d.entries as unknown[]) checkEntry(e, where);
  if (!d.dirs.every((p) => typeof p === 'string' && p.startsWith('/'))) throw bad('bad directory list');
  if (d.opaque !== undefined && !(Array.isArray(d.opaque) && d.opaque.every((p) => typeof p === 'string' && p.startsWith('/')))) {
    throw bad('bad removed-directory list');
  }
  checkHistory(d, where);
  return d as StateDocument;
}
