import { OMIT_HEADERS, formatPatch, structuredPatch } from 'diff';
import { textProblem } from '../seam/index.js';

// The unified diff that write and edit put in their structured values for a UI to show; the
// model's text does not include it. Both sides come from the seam (writeText and editText with
// `withBytes`): the bytes the change replaced and those it published, so the diff is exactly
// the change, with no read of its own that another writer could race.

/** Largest diff text kept in a value (UTF-8 bytes); longer ones are cut at a line and flagged. */
export const MAX_DIFF_BYTES = 64 * 1024;
/** Files larger than this (either side) get no diff: computing one costs more than it shows. */
export const MAX_DIFF_INPUT_BYTES = 1024 * 1024;

export interface DiffFields {
  /** Unified diff of the change (`--- /dev/null` for a new file). */
  readonly diff?: string;
  /** The diff was cut at MAX_DIFF_BYTES. */
  readonly diffTruncated?: boolean;
}

const keepBom = new TextDecoder('utf-8', { ignoreBOM: true });
const empty = new Uint8Array();

/** The diff fields for a change from `before` (undefined: a new file) to `after`; none when either side is not text or too large. */
export function diffFields(path: string, before: Uint8Array | undefined, after: Uint8Array): DiffFields {
  if ((before?.byteLength ?? 0) > MAX_DIFF_INPUT_BYTES || after.byteLength > MAX_DIFF_INPUT_BYTES) return {};
  if (textProblem(before ?? empty) !== undefined || textProblem(after) !== undefined) return {};
  const from = before === undefined ? '/dev/null' : path;
  const patch = structuredPatch(from, path, keepBom.decode(before ?? empty), keepBom.decode(after), undefined, undefined, { context: 3 });
  const text = patch.hunks.length === 0 ? '' : `--- ${from}\n+++ ${path}\n${formatPatch(patch, OMIT_HEADERS)}`;
  return capDiff(text);
}

/** Cuts a diff to MAX_DIFF_BYTES at a line boundary. */
export function capDiff(text: string, max = MAX_DIFF_BYTES): DiffFields {
  if (Buffer.byteLength(text, 'utf8') <= max) return { diff: text, diffTruncated: false };
  const bytes = Buffer.from(text, 'utf8');
  const cut = bytes.lastIndexOf(0x0a, max - 1);
  return { diff: bytes.subarray(0, cut === -1 ? 0 : cut + 1).toString('utf8'), diffTruncated: true };
}
