import { OMIT_HEADERS, formatPatch, structuredPatch } from 'diff';
import { textProblem } from '../../seam/index.js';
import { bytesEqual } from './core.js';

// Git-style diffs of one file or one move, as review and fork show them.
/** A move in git's format: similarity 100% when the content is the same, else the hunks too. */
export function renameDiff(
  fromName: string,
  toName: string,
  before: Uint8Array | undefined,
  after: Uint8Array | undefined,
  modes: FileModes = {},
): string {
  // The lower's source is gone (or the file too): nothing to show as a move.
  if (before === undefined || after === undefined) return fileDiff(toName, undefined, after, modes);
  const a = `a/${fromName}`;
  const b = `b/${toName}`;
  let out = `diff --git ${a} ${b}\n${modeChange(modes)}`;
  if (bytesEqual(before, after)) return `${out}similarity index 100%\nrename from ${fromName}\nrename to ${toName}\n`;
  out += `rename from ${fromName}\nrename to ${toName}\n`;
  if (textProblem(before) !== undefined || textProblem(after) !== undefined) return `${out}Binary files ${a} and ${b} differ\n`;
  const patch = structuredPatch(a, b, keepBom.decode(before), keepBom.decode(after), undefined, undefined, { context: 3 });
  return `${out}--- ${a}\n+++ ${b}\n${formatPatch(patch, OMIT_HEADERS)}`;
}

const keepBom = new TextDecoder('utf-8', { ignoreBOM: true });

/** The executable bits of a file before and after a change, where known. */
/** A side's executable bit, or `link` for a symbolic link (git's mode 120000). */
export interface FileModes {
  readonly before?: boolean | 'link';
  readonly after?: boolean | 'link';
}

function gitMode(mode: boolean | 'link' | undefined): string {
  return mode === 'link' ? '120000' : mode === true ? '100755' : '100644';
}

/** git's lines for a mode change, or nothing. */
function modeChange({ before, after }: FileModes): string {
  if (before === undefined || after === undefined || before === after) return '';
  return `old mode ${gitMode(before)}\nnew mode ${gitMode(after)}\n`;
}

/** One file's part of a git-style unified diff; empty when the bytes are the same. */
export function fileDiff(name: string, before: Uint8Array | undefined, after: Uint8Array | undefined, modes: FileModes = {}): string {
  if (before === undefined && after === undefined) return '';
  const sameBytes = before !== undefined && after !== undefined && bytesEqual(before, after);
  const a = `a/${name}`;
  const b = `b/${name}`;
  let out = `diff --git ${a} ${b}\n`;
  if (sameBytes) return modes.before === modes.after || modes.before === undefined ? '' : `${out}${modeChange(modes)}`;
  // As git writes a file's mode: 100755 when executable, else 100644.
  if (before === undefined) out += `new file mode ${gitMode(modes.after)}\n`;
  if (after === undefined) out += `deleted file mode ${gitMode(modes.before)}\n`;
  if (before !== undefined && after !== undefined) out += modeChange(modes);
  const from = before === undefined ? '/dev/null' : a;
  const to = after === undefined ? '/dev/null' : b;
  const empty = new Uint8Array();
  // The seam's own definition of text (T1): what it would refuse to read is binary here.
  if (textProblem(before ?? empty) !== undefined || textProblem(after ?? empty) !== undefined) {
    return `${out}Binary files ${from} and ${to} differ\n`;
  }
  const patch = structuredPatch(from, to, keepBom.decode(before ?? empty), keepBom.decode(after ?? empty), undefined, undefined, {
    context: 3,
  });
  if (patch.hunks.length === 0) return out;
  return `${out}--- ${from}\n+++ ${to}\n${formatPatch(patch, OMIT_HEADERS)}`;
}
