import { FsError, dominantEol, lineBreaks, type Eol } from '../../seam/index.js';
import { LineIndex, MATCH_LEVELS, seek, type MatchLevel } from './match.js';
import type { PatchHunk, PatchLine } from './parse.js';

/** A hunk that matched only at a looser level than exact. */
export interface LoosenedHunk {
  /** 1-based number of the hunk in its file's update. */
  readonly hunk: number;
  readonly level: Exclude<MatchLevel, 'exact'>;
}

export interface AppliedHunks {
  readonly text: string;
  readonly loosened: readonly LoosenedHunk[];
}

interface Placement {
  readonly at: number;
  readonly lines: readonly PatchLine[];
}

const loosest = (a: MatchLevel, b: MatchLevel): MatchLevel => (MATCH_LEVELS.indexOf(a) >= MATCH_LEVELS.indexOf(b) ? a : b);

/**
 * Applies an update's hunks to decoded text, in order, each after the previous one. Lines outside
 * the hunks, context lines (as the file spells them), every line break and the presence of a final
 * line break are kept; added lines take the break of the place they land. `what` names the file
 * in errors.
 */
export function applyHunks(text: string, hunks: readonly PatchHunk[], what: string): AppliedHunks {
  const { lines, breaks } = lineBreaks(text);
  const index = new LineIndex(lines);
  const placements: Placement[] = [];
  const loosened: LoosenedHunk[] = [];
  let cursor = 0;
  hunks.forEach((hunk, k) => {
    const name = `cannot update "${what}": hunk ${k + 1} (patch line ${hunk.line})`;
    let level: MatchLevel = 'exact';
    let header: { text: string; level: MatchLevel; at: number } | undefined;
    for (const h of hunk.headers) {
      const found = seek(index, [h], cursor);
      if (found === undefined) throw new FsError('FS_EDIT_NOT_FOUND', `${name}: the "@@ ${h}" line was not found${after(cursor)}`);
      cursor = found.at + 1;
      // The parser trims a header, so a header met only with its whitespace ignored loosened nothing.
      level = loosest(level, found.level === 'unicode' ? 'unicode' : 'exact');
      header = { text: h, level: found.level, at: found.at };
    }
    const placed = place(index, hunk, cursor, header, name);
    level = loosest(level, placed.level);
    if (level !== 'exact') loosened.push({ hunk: k + 1, level });
    placements.push(placed);
    cursor = placed.at + placed.lines.filter((l) => l.op !== '+').length;
  });
  return { text: splice(lines, breaks, placements, dominantEol(text)), loosened };
}

const after = (cursor: number) => (cursor > 0 ? ` after line ${cursor}` : '');

function place(
  index: LineIndex,
  hunk: PatchHunk,
  cursor: number,
  header: { text: string; level: MatchLevel; at: number } | undefined,
  name: string,
): Placement & { level: MatchLevel } {
  let body = hunk.lines;
  const old = (ls: readonly PatchLine[]) => ls.filter((l) => l.op !== '+').map((l) => l.text);
  if (old(body).length === 0) {
    // Pure addition: right after the header, else at the end of the file.
    return { at: header === undefined ? index.lines.length : cursor, lines: body, level: 'exact' };
  }
  if (hunk.endOfFile) {
    const start = index.lines.length - old(body).length;
    for (const level of MATCH_LEVELS) {
      if (start >= cursor && index.find(old(body), level, start, 1).length > 0) return { at: start, lines: body, level };
    }
  }
  let found = seek(index, old(body), cursor);
  // A trailing empty context line often stands for the file's final line break.
  if (found === undefined && body.length > 1 && body.at(-1)!.op === ' ' && body.at(-1)!.text === '') {
    body = body.slice(0, -1);
    if (old(body).length > 0) found = seek(index, old(body), cursor);
  }
  // Models often repeat the `@@` line as the hunk's first context line: a closer match from the
  // header's own line wins over a looser one further down.
  if (header !== undefined && found?.level !== 'exact') {
    const again = seek(index, old(body), header.at);
    if (again !== undefined && (found === undefined || MATCH_LEVELS.indexOf(again.level) < MATCH_LEVELS.indexOf(found.level))) found = again;
  }
  if (found === undefined) {
    const first = old(body)[0] ?? '';
    throw new FsError('FS_EDIT_NOT_FOUND', `${name}: its context and removed lines (starting ${JSON.stringify(first.slice(0, 80))}) were not found${after(cursor)}`);
  }
  const [second] = index.find(old(body), found.level, found.at + 1, 1);
  if (second !== undefined) {
    // Two matches are told apart only by a header line between them.
    const separated = header !== undefined && index.find([header.text], header.level, found.at + 1, 1, second).length > 0;
    if (!separated) {
      throw new FsError(
        'FS_AMBIGUOUS_EDIT',
        `${name}: its lines match at line ${found.at + 1} and again at line ${second + 1}; add more context lines, or an "@@ <line>" header naming a unique line above the intended place`,
      );
    }
  }
  return { at: found.at, lines: body, level: found.level };
}

/** The new text: placements spliced into the file's lines, every untouched break kept. */
function splice(lines: readonly string[], breaks: readonly ('' | Eol)[], placements: readonly Placement[], eol: Eol): string {
  const outLines: string[] = [];
  const outBreaks: ('' | Eol)[] = [];
  const copy = (i: number) => (outLines.push(lines[i]!), outBreaks.push(breaks[i]!));
  let pos = 0;
  for (const p of placements) {
    for (; pos < p.at; pos++) copy(pos);
    // Added lines take the break of the first line they replace, else the file's usual one.
    const local = (breaks[p.at] || breaks[p.at - 1] || eol) as Eol;
    for (const l of p.lines) {
      if (l.op === ' ') copy(pos++);
      else if (l.op === '-') pos++;
      else (outLines.push(l.text), outBreaks.push(local));
    }
  }
  for (; pos < lines.length; pos++) copy(pos);
  // A file without a final line break keeps lacking one; an empty file gets one like a new file.
  const finalBreak = lines.length === 0 || breaks.at(-1) !== '';
  for (let i = 0; i < outBreaks.length; i++) {
    const isLast = i === outBreaks.length - 1;
    if (!isLast && outBreaks[i] === '') outBreaks[i] = eol;
    if (isLast) outBreaks[i] = finalBreak ? outBreaks[i] || eol : '';
  }
  return outLines.map((l, i) => l + outBreaks[i]).join('');
}
