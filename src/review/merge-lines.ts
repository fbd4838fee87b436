import { diff3MergeRegions } from 'node-diff3';
import { CONFLICT_MARKERS } from '../backends/overlay/commit-markers.js';
import { checkText, decodeValidUtf8, encodeKeepingBom, lineBreaks, textProblem } from '../seam/text.js';

// Line-level three-way merge of text files. node-diff3 is given arrays of lines: given strings it
// would split them at every run of whitespace (words, not lines), losing the line breaks. The
// seam's splitter decides what a line is (LF or CRLF ends one; a lone CR does not); each line is
// compared together with its break, so a line-ending change, or a final line gaining or losing its
// break, is a change of that line like any other. A UTF-8 BOM is not a line: it merges as one bit.

/** One conflicting region: each side's lines (with their breaks) and 1-based first line numbers. */
export interface MergeRegion {
  readonly base: string;
  readonly ours: string;
  readonly theirs: string;
  readonly baseStart: number;
  readonly oursStart: number;
  readonly theirsStart: number;
}

export type TextMerge =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly regions: readonly MergeRegion[]; readonly withMarkers: Uint8Array };

/** The marker lines, as git writes them (the side names follow the open and close markers). */
export const MARKERS = { base: CONFLICT_MARKERS.base, split: CONFLICT_MARKERS.split } as const;

export interface MarkerNames {
  readonly ours: string;
  readonly theirs: string;
}

/** Lines of decoded text, each with the break that ends it ('' for a last line without one). */
export function linesOf(text: string): string[] {
  const { lines, breaks } = lineBreaks(text);
  return lines.map((line, i) => line + breaks[i]!);
}

/** True when the bytes are text by the seam's rule (T1). */
export function isText(bytes: Uint8Array): boolean {
  return textProblem(bytes) === undefined;
}

function decode(bytes: Uint8Array): { readonly text: string; readonly bom: boolean } {
  const { body, bom } = checkText(bytes, 'cannot merge');
  return { text: decodeValidUtf8(body), bom };
}

/**
 * Three-way merge of three text contents (`base` undefined: both sides added the file). Clean when
 * the sides' changes are separated by at least one unchanged line, or identical; otherwise the
 * conflicting regions, and the merge with git-style markers around each.
 */
export function mergeText(base: Uint8Array | undefined, ours: Uint8Array, theirs: Uint8Array, names: MarkerNames = { ours: 'parent', theirs: 'fork' }): TextMerge {
  const o = base === undefined ? { text: '', bom: false } : decode(base);
  const a = decode(ours);
  const b = decode(theirs);
  // The BOM: one side's change wins; both changed means both agree (it is one bit).
  const bom = a.bom === o.bom ? b.bom : a.bom;
  const [al, ol, bl] = [linesOf(a.text), linesOf(o.text), linesOf(b.text)];
  const out: string[] = [];
  const marked: string[] = [];
  const regions: MergeRegion[] = [];
  const eol = dominantBreak(al);
  for (const r of diff3MergeRegions(al, ol, bl)) {
    if (r.stable) {
      out.push(...r.bufferContent);
      marked.push(...r.bufferContent);
      continue;
    }
    if (sameLines(r.aContent, r.bContent)) {
      out.push(...r.aContent);
      marked.push(...r.aContent);
      continue;
    }
    regions.push({
      base: r.oContent.join(''),
      ours: r.aContent.join(''),
      theirs: r.bContent.join(''),
      baseStart: r.oStart + 1,
      oursStart: r.aStart + 1,
      theirsStart: r.bStart + 1,
    });
    marked.push(...markerBlock(r.aContent, r.oContent, r.bContent, eol, names));
  }
  if (regions.length === 0) return { ok: true, bytes: encodeKeepingBom(out.join(''), bom) };
  return { ok: false, regions, withMarkers: encodeKeepingBom(marked.join(''), bom) };
}

/** A conflict as git writes it (diff3 style). A side whose last line has no break gets one, so each marker starts a line. */
function markerBlock(ours: readonly string[], base: readonly string[], theirs: readonly string[], eol: string, names: MarkerNames): string[] {
  const closed = (lines: readonly string[]) => lines.map((l, i) => (i === lines.length - 1 && !l.endsWith('\n') ? l + eol : l));
  return [
    `<<<<<<< ${names.ours}${eol}`,
    ...closed(ours),
    `${MARKERS.base}${eol}`,
    ...closed(base),
    `${MARKERS.split}${eol}`,
    ...closed(theirs),
    `>>>>>>> ${names.theirs}${eol}`,
  ];
}

function sameLines(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((line, i) => line === b[i]);
}

/** The break most of the lines end with (ties: LF), for marker lines. */
function dominantBreak(lines: readonly string[]): string {
  let crlf = 0;
  let lf = 0;
  for (const l of lines) {
    if (l.endsWith('\r\n')) crlf++;
    else if (l.endsWith('\n')) lf++;
  }
  return crlf > lf ? '\r\n' : '\n';
}
