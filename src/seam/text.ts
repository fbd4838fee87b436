import { isUtf8 } from 'node:buffer';
import { FsError } from './errors.js';

/** The UTF-8 byte order mark. */
export const UTF8_BOM = new Uint8Array([0xef, 0xbb, 0xbf]);

export function hasUtf8Bom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

export interface DecodedText {
  readonly text: string;
  readonly bom: boolean;
}

/**
 * The offset of the first NUL byte, or -1. Through a Buffer view (memchr): a plain Uint8Array's
 * indexOf looks at one element at a time, several times slower over megabytes.
 */
export function firstNul(bytes: Uint8Array): number {
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).indexOf(0);
}

/**
 * T1 as a yes or no: valid UTF-8, no NUL byte, no UTF-16 byte order mark. Self-contained (it
 * refers to nothing outside itself), so that search's read workers run this very source.
 */
export function isTextBytes(bytes: Buffer, validUtf8: (b: Uint8Array) => boolean): boolean {
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) return false;
  return bytes.indexOf(0) === -1 && validUtf8(bytes);
}

/** Why some bytes are not text, or undefined when they are valid UTF-8 without NUL (T1). */
export function textProblem(bytes: Uint8Array): string | undefined {
  const view = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isTextBytes(view, isUtf8)) return undefined;
  if (bytes.length >= 2) {
    const [a, b] = [bytes[0], bytes[1]];
    if ((a === 0xff && b === 0xfe) || (a === 0xfe && b === 0xff)) return 'a UTF-16 byte order mark (only UTF-8 is supported)';
  }
  const nul = firstNul(bytes);
  if (nul !== -1) return `a NUL byte at byte ${nul} (binary file)`;
  if (!isUtf8(bytes)) return `invalid UTF-8 at byte ${firstInvalidUtf8(bytes)}`;
  return undefined;
}

const fatalDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
// Only for bytes already proven valid; keeps a U+FEFF that starts a later chunk.
const validDecoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * T1 without decoding: the same check and FS_NOT_TEXT message as decodeText. Returns the bytes
 * after any UTF-8 BOM.
 */
export function checkText(bytes: Uint8Array, what: string): { readonly body: Uint8Array; readonly bom: boolean } {
  const problem = textProblem(bytes);
  if (problem !== undefined) throw new FsError('FS_NOT_TEXT', `${what}: not a UTF-8 text file: found ${problem}`);
  const bom = hasUtf8Bom(bytes);
  return { body: bom ? bytes.subarray(3) : bytes, bom };
}

/**
 * T1: the one decoder used by read and edit alike. Valid UTF-8 without NUL bytes is text;
 * anything else is FS_NOT_TEXT with a message saying what was found. A UTF-8 BOM is split off.
 */
export function decodeText(bytes: Uint8Array, what: string): DecodedText {
  const { body, bom } = checkText(bytes, what);
  return { text: fatalDecoder.decode(body), bom };
}

/**
 * Decodes valid UTF-8 (from checkText) a piece at a time: each piece is at most `maxBytes`
 * bytes (at least 4) and never splits a sequence, so never a surrogate pair.
 */
export function* validUtf8Chunks(body: Uint8Array, maxBytes: number): Generator<string> {
  for (let start = 0; start < body.length; ) {
    const end = validUtf8ChunkEnd(body, start, maxBytes);
    yield validDecoder.decode(body.subarray(start, end));
    start = end;
  }
}

/** Where the validUtf8Chunks piece that begins at `start` ends. */
export function validUtf8ChunkEnd(body: Uint8Array, start: number, maxBytes: number): number {
  let end = Math.min(body.length, start + Math.max(4, maxBytes));
  while (end < body.length && (body[end]! & 0xc0) === 0x80) end--;
  return end;
}

/** Decodes bytes already proven valid UTF-8 (from checkText), keeping any U+FEFF as text. */
export function decodeValidUtf8(bytes: Uint8Array): string {
  return validDecoder.decode(bytes);
}

/** Encodes text as UTF-8, prefixing a BOM when asked and the text does not already start with one. */
export function encodeText(text: string, bom: boolean): Uint8Array {
  const body = Buffer.from(text, 'utf8');
  if (!bom || text.startsWith('\uFEFF')) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  const out = new Uint8Array(body.byteLength + 3);
  out.set(UTF8_BOM, 0);
  out.set(body, 3);
  return out;
}

/** Rejects strings that cannot be written as the UTF-8 text the seam promises to read back. */
export function assertWritableText(value: unknown, name: string): asserts value is string {
  if (typeof value !== 'string') {
    throw new FsError('FS_INVALID_ARGUMENT', `${name} must be a string, got ${value === null ? 'null' : typeof value}`);
  }
  const nul = value.indexOf('\0');
  if (nul !== -1) throw new FsError('FS_INVALID_ARGUMENT', `${name} contains a NUL character at index ${nul}; only text can be written`);
  if (!value.isWellFormed()) {
    throw new FsError('FS_INVALID_ARGUMENT', `${name} contains a lone UTF-16 surrogate, which has no UTF-8 encoding`);
  }
}

/** Index of the first byte that starts an invalid UTF-8 sequence, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) (need = 1), (min = 0x80);
    else if (b >= 0xe0 && b <= 0xef) (need = 2), (min = 0x800);
    else if (b >= 0xf0 && b <= 0xf4) (need = 3), (min = 0x10000);
    else return i;
    let cp = b & (0xff >> (need + 2));
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Line endings. A line break is LF or CRLF; a lone CR is an ordinary character (L3).
// ---------------------------------------------------------------------------------------------

export type Eol = '\n' | '\r\n';

export interface EolCounts {
  readonly lf: number;
  readonly crlf: number;
}

export function countEols(text: string): EolCounts {
  let lf = 0;
  let crlf = 0;
  let i = text.indexOf('\n');
  while (i !== -1) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
    else lf++;
    i = text.indexOf('\n', i + 1);
  }
  return { lf, crlf };
}

/** A file "is CRLF" when most of its line breaks are CRLF (ties go to LF). */
export function dominantEol(text: string): Eol {
  const { lf, crlf } = countEols(text);
  return crlf > lf ? '\r\n' : '\n';
}

export function crlfToLf(text: string): string {
  return text.includes('\r\n') ? text.replaceAll('\r\n', '\n') : text;
}

/** Converts every LF line break (bare or in CRLF) to `eol`. */
export function withEol(text: string, eol: Eol): string {
  const lf = crlfToLf(text);
  return eol === '\n' ? lf : lf.replaceAll('\n', '\r\n');
}

/**
 * L4/L5: the text to store when `content` replaces an existing file. The file keeps its BOM; a
 * CRLF file written with LF-only content stays CRLF; content that has any CRLF is kept as given.
 * A new file (or a non-text one) is written exactly as given.
 */
export function textForWrite(content: string, existing: Uint8Array | undefined): Uint8Array {
  if (existing === undefined || textProblem(existing) !== undefined) return encodeText(content, false);
  const bom = hasUtf8Bom(existing);
  const old = fatalDecoder.decode(bom ? existing.subarray(3) : existing);
  let text = content;
  if (!content.includes('\r\n') && content.includes('\n') && dominantEol(old) === '\r\n') text = withEol(content, '\r\n');
  return encodeText(text, bom);
}

/** 1-based line number of the character at `index` (lines end at LF; lone CR does not count). */
export function lineNumberAt(text: string, index: number): number {
  return lineNumbersAt(text, [index])[0]!;
}

/** lineNumberAt for each of `indices` (ascending), in one pass over the text. */
/** Where matches start, for a message: `at line 4`, or `at lines 1, 3` (a line with several matches named once). */
export function atLines(lines: readonly number[], more = false): string {
  const unique = [...new Set(lines)];
  return `at line${unique.length === 1 && !more ? '' : 's'} ${unique.join(', ')}${more ? ', …' : ''}`;
}

export function lineNumbersAt(text: string, indices: readonly number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let nl = text.indexOf('\n');
  for (const index of indices) {
    while (nl !== -1 && nl < index) {
      line++;
      nl = text.indexOf('\n', nl + 1);
    }
    out.push(line);
  }
  return out;
}

/**
 * The one line splitter: `text` cut at LF, the CR of a CRLF dropped, a lone CR kept. `text` holds
 * whole lines without the line break after the last one; `brokenAfter` says whether one followed
 * it (false at the end of a file that has no final line break, where a last CR is a lone CR).
 * Self-contained on purpose: grep's worker runs its source text.
 */
export function splitLines(text: string, brokenAfter: boolean): string[] {
  const lines = text.split('\n');
  const last = lines.length - 1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if ((i < last || brokenAfter) && line !== undefined && line.charCodeAt(line.length - 1) === 13) lines[i] = line.slice(0, -1);
  }
  return lines;
}

/**
 * The line break after each line of `text`, as splitLines(text without its final break, …) cuts
 * it: `'\r\n'`, `'\n'`, or `''` for a last line that has none. Empty text has no lines.
 */
export function lineBreaks(text: string): { readonly lines: string[]; readonly breaks: ('' | Eol)[] } {
  if (text === '') return { lines: [], breaks: [] };
  const broken = text.endsWith('\n');
  const lines = splitLines(broken ? text.slice(0, -1) : text, broken);
  const breaks: ('' | Eol)[] = [];
  let at = 0;
  for (let i = 0; i < lines.length; i++) {
    const nl = text.indexOf('\n', at);
    if (nl === -1) breaks.push('');
    else breaks.push(nl - at === lines[i]!.length + 1 ? '\r\n' : '\n'); // splitLines dropped the CR of a CRLF
    at = nl + 1;
  }
  return { lines, breaks };
}

/** Encodes decoded text back with exactly the BOM it was read with, even when the text starts with U+FEFF. */
export function encodeKeepingBom(text: string, bom: boolean): Uint8Array {
  const body = encodeText(text, false);
  if (!bom) return body;
  const out = new Uint8Array(body.byteLength + 3);
  out.set(UTF8_BOM, 0);
  out.set(body, 3);
  return out;
}
