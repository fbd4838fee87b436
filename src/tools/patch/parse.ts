import { FsError, splitLines } from '../../seam/index.js';

// The V4A patch format (OpenAI's apply_patch): an envelope of file operations, each update a list
// of hunks of context (' '), removed ('-') and added ('+') lines. The parser is lenient where
// models are sloppy (padded markers, CRLF, a heredoc wrapper, a blank line for an empty context
// line) and strict everywhere else: anything it cannot place is an error with its line number.

export interface PatchLine {
  readonly op: ' ' | '-' | '+';
  readonly text: string;
}

export interface PatchHunk {
  /** The `@@ context` lines before the hunk, in order (a bare `@@` adds none). */
  readonly headers: readonly string[];
  readonly lines: readonly PatchLine[];
  /** Ended by `*** End of File`: the hunk's last line is the file's last line. */
  readonly endOfFile: boolean;
  /** 1-based line of the patch where the hunk starts. */
  readonly line: number;
}

export type PatchOperation =
  | { readonly kind: 'add'; readonly path: string; readonly lines: readonly string[]; readonly line: number }
  | { readonly kind: 'delete'; readonly path: string; readonly line: number }
  | { readonly kind: 'update'; readonly path: string; readonly moveTo?: string; readonly hunks: readonly PatchHunk[]; readonly line: number };

export const BEGIN = '*** Begin Patch';
export const END = '*** End Patch';
const ADD = '*** Add File:';
const DELETE = '*** Delete File:';
const UPDATE = '*** Update File:';
const MOVE = '*** Move to:';
const EOF_MARK = '*** End of File';

const invalid = (line: number, why: string) => new FsError('FS_INVALID_ARGUMENT', `invalid patch: line ${line}: ${why}`);

/** The patch's lines, CRLF or LF, without the break after the last one. */
function patchLines(input: string): string[] {
  const broken = input.endsWith('\n');
  return splitLines(broken ? input.slice(0, input.endsWith('\r\n') ? -2 : -1) : input, broken);
}

/** Parses a whole `*** Begin Patch` … `*** End Patch` envelope. */
export function parsePatch(input: string): PatchOperation[] {
  if (typeof input !== 'string') throw new FsError('FS_INVALID_ARGUMENT', 'invalid patch: the input must be a string');
  const lines = patchLines(input);
  let first = 0;
  let last = lines.length - 1;
  while (first <= last && lines[first]!.trim() === '') first++;
  while (last >= first && lines[last]!.trim() === '') last--;
  // A shell heredoc around the patch (`<<'EOF'` … `EOF`), as models copy it from CLI instructions.
  if (first < last && /^<<\s*['"]?(\w+)['"]?\s*$/.test(lines[first]!.trim())) {
    const tag = /^<<\s*['"]?(\w+)/.exec(lines[first]!.trim())![1];
    if (lines[last]!.trim() === tag) (first++, last--);
  }
  if (first > last || lines[first]!.trim() !== BEGIN) throw invalid(first + 1, `the first line must be "${BEGIN}"`);
  if (last === first || lines[last]!.trim() !== END) throw invalid(last + 1, `the last line must be "${END}"`);
  const ops = parseBody(lines, first + 1, last);
  if (ops.length === 0) throw invalid(first + 1, 'the patch changes no file');
  return ops;
}

/**
 * Parses the body of one operation without the envelope, as the Responses API sends it: the
 * `+` lines of a new file, or the hunks of an update.
 */
export function parseOperationBody(kind: 'add' | 'update', path: string, diff: string): PatchOperation {
  const lines = diff === '' ? [] : patchLines(diff);
  if (kind === 'add') {
    const content: string[] = [];
    lines.forEach((l, i) => {
      if (!l.startsWith('+')) throw invalid(i + 1, `a line of a new file must start with "+", got ${JSON.stringify(l.slice(0, 40))}`);
      content.push(l.slice(1));
    });
    return { kind: 'add', path, lines: content, line: 1 };
  }
  const { hunks, next } = parseHunks(lines, 0, lines.length, 1);
  if (next < lines.length) throw invalid(next + 1, `unexpected line ${JSON.stringify(lines[next]!.slice(0, 40))}`);
  if (hunks.length === 0) throw invalid(1, `the update of "${path}" has no hunks`);
  return { kind: 'update', path, hunks, line: 1 };
}

function pathAfter(line: string, marker: string, at: number): string {
  const path = line.slice(marker.length).trim();
  if (path === '') throw invalid(at + 1, `"${marker}" needs a path`);
  return path;
}

function parseBody(lines: readonly string[], from: number, to: number): PatchOperation[] {
  const ops: PatchOperation[] = [];
  let i = from;
  while (i < to) {
    const header = lines[i]!.trim();
    const at = i;
    if (header === '') {
      i++;
      continue;
    }
    if (header.startsWith(ADD)) {
      const path = pathAfter(header, ADD, at);
      const content: string[] = [];
      for (i++; i < to && lines[i]!.startsWith('+'); i++) content.push(lines[i]!.slice(1));
      ops.push({ kind: 'add', path, lines: content, line: at + 1 });
    } else if (header.startsWith(DELETE)) {
      ops.push({ kind: 'delete', path: pathAfter(header, DELETE, at), line: at + 1 });
      i++;
    } else if (header.startsWith(UPDATE)) {
      const path = pathAfter(header, UPDATE, at);
      i++;
      let moveTo: string | undefined;
      if (i < to && lines[i]!.trim().startsWith(MOVE)) moveTo = pathAfter(lines[i]!.trim(), MOVE, i++);
      const { hunks, next } = parseHunks(lines, i, to, at + 1);
      if (hunks.length === 0) throw invalid(at + 1, `the update of "${path}" has no hunks`);
      ops.push({ kind: 'update', path, ...(moveTo === undefined ? {} : { moveTo }), hunks, line: at + 1 });
      i = next;
    } else {
      throw invalid(at + 1, `expected "${ADD}", "${DELETE}" or "${UPDATE}", got ${JSON.stringify(header.slice(0, 60))}`);
    }
  }
  return ops;
}

/** Hunks from `from` until a line starting with `***` (the next operation) or `to`. */
function parseHunks(lines: readonly string[], from: number, to: number, opLine: number): { hunks: PatchHunk[]; next: number } {
  const hunks: PatchHunk[] = [];
  let i = from;
  while (i < to && !lines[i]!.startsWith('***')) {
    const start = i;
    const headers: string[] = [];
    // Several `@@` lines narrow in steps (`@@ class A`, then `@@ def f`).
    while (i < to && lines[i]!.startsWith('@@')) {
      const h = lines[i]!.slice(2).trim();
      if (h !== '') headers.push(h);
      i++;
    }
    if (start === i && hunks.length > 0) throw invalid(i + 1, 'a hunk after the first must start with "@@"');
    const body: PatchLine[] = [];
    let endOfFile = false;
    for (; i < to; i++) {
      const l = lines[i]!;
      if (l.trim() === EOF_MARK) {
        if (body.length === 0) throw invalid(i + 1, `"${EOF_MARK}" must follow the lines of a hunk`);
        endOfFile = true;
        i++;
        break;
      }
      if (l.startsWith('***') || l.startsWith('@@')) break;
      const op = l[0];
      if (l === '') body.push({ op: ' ', text: '' }); // an empty context line that lost its space
      else if (op === ' ' || op === '-' || op === '+') body.push({ op, text: l.slice(1) });
      else throw invalid(i + 1, `a hunk line must start with " ", "-" or "+", got ${JSON.stringify(l.slice(0, 60))}`);
    }
    if (body.length === 0) throw invalid(start + 1, `a hunk of the update at line ${opLine} has no lines`);
    hunks.push({ headers, lines: body, endOfFile, line: start + 1 });
  }
  return { hunks, next: i };
}

/** The envelope text of operations: what parsePatch reads back as the same operations. */
export function formatPatch(ops: readonly PatchOperation[]): string {
  const out = [BEGIN];
  for (const op of ops) {
    if (op.kind === 'add') out.push(`${ADD} ${op.path}`, ...op.lines.map((l) => `+${l}`));
    else if (op.kind === 'delete') out.push(`${DELETE} ${op.path}`);
    else {
      out.push(`${UPDATE} ${op.path}`);
      if (op.moveTo !== undefined) out.push(`${MOVE} ${op.moveTo}`);
      for (const h of op.hunks) {
        out.push(...(h.headers.length === 0 ? ['@@'] : h.headers.map((c) => `@@ ${c}`)));
        out.push(...h.lines.map((l) => l.op + l.text));
        if (h.endOfFile) out.push(EOF_MARK);
      }
    }
  }
  out.push(END);
  return `${out.join('\n')}\n`;
}
