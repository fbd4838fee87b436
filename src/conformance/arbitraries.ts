import fc from 'fast-check';

/**
 * Generators biased toward what breaks text tools: CRLF and mixed endings, lone CR, BOM
 * characters, `$` replacement patterns, astral characters, smart quotes, and a small alphabet
 * so that matches repeat.
 */

export const DOLLAR_PATTERNS = ['$&', '$$', '$`', "$'", '$1', '$<n>', '$'] as const;

/** Pieces of a line: never a line break, never a lone CR. */
const WORDS = ['a', 'b', 'ab', 'aa', 'x', 'foo', 'bar', ' ', '  ', '\t', 'é', '😀', '𝒳', '“q”', '"q"', '\uFEFF'] as const;

export type EolMode = 'lf' | 'crlf' | 'mixed';

export const wordArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 2, arbitrary: fc.constantFrom(...DOLLAR_PATTERNS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 3 }).filter(isPlainLineText) },
);

/** One line without its ending; may hold a lone CR (never at the end, where it would join a CRLF). */
export const lineArb: fc.Arbitrary<string> = fc
  .tuple(fc.array(wordArb, { maxLength: 6 }), fc.option(fc.nat(6), { freq: 5 }))
  .map(([words, cr]) => {
    const points = words.flatMap((w) => Array.from(w));
    if (cr === null || points.length === 0) return points.join('');
    points.splice(Math.min(cr, points.length - 1), 0, '\r');
    return points.join('');
  })
  .map((line) => (line.endsWith('\r') ? `${line}z` : line));

export interface Lines {
  readonly lines: readonly string[];
  readonly eols: readonly ('\n' | '\r\n')[];
  /** Whether the last line has a line ending. */
  readonly finalEol: boolean;
}

export const eolModeArb: fc.Arbitrary<EolMode> = fc.constantFrom('lf', 'crlf', 'mixed');

/** Text as lines with known endings (CRLF-heavy), for rules that reason about each line's ending. */
export function linesArb(constraints: { minLines?: number; maxLines?: number } = {}): fc.Arbitrary<Lines> {
  const { minLines = 1, maxLines = 8 } = constraints;
  return fc
    .tuple(
      fc.array(lineArb, { minLength: minLines, maxLength: maxLines }),
      eolModeArb,
      fc.array(fc.boolean(), { minLength: maxLines, maxLength: maxLines }),
      fc.boolean(),
    )
    .map(([lines, mode, coin, finalEol]) => ({
      lines,
      eols: lines.map((_, i) => (mode === 'lf' ? '\n' : mode === 'crlf' ? '\r\n' : coin[i] ? '\r\n' : '\n')),
      finalEol,
    }));
}

export function joinLines({ lines, eols, finalEol }: Lines): string {
  return lines.map((l, i) => (i < lines.length - 1 || finalEol ? l + eols[i]! : l)).join('');
}

/** Free-form text: line breaks of both kinds and lone CRs anywhere. */
const chaoticArb: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 5, arbitrary: wordArb },
      { weight: 2, arbitrary: fc.constantFrom('\n', '\r\n', '\r\n', '\r') },
    ),
    { maxLength: 24 },
  )
  .map((parts) => parts.join(''));

export const textArb: fc.Arbitrary<string> = fc.oneof(chaoticArb, linesArb().map(joinLines));

/** Two different texts: an old and a new content. */
export const distinctPairArb: fc.Arbitrary<[string, string]> = fc.tuple(textArb, textArb).filter(([a, b]) => a !== b);

/** Text that reads back as itself: a leading U+FEFF would be taken for a BOM. */
export const bodyTextArb: fc.Arbitrary<string> = textArb.map((t) => t.replace(/^\uFEFF+/, ''));

/** Text and whether the file starts with a UTF-8 BOM. */
export const fileTextArb: fc.Arbitrary<{ text: string; bom: boolean }> = fc.record({
  text: textArb,
  bom: fc.boolean(),
});

/** A replacement string: fragments, `$` patterns, line breaks of either kind. */
export const replacementArb: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: wordArb },
      { weight: 2, arbitrary: fc.constantFrom(...DOLLAR_PATTERNS) },
      { weight: 1, arbitrary: fc.constantFrom('\n', '\r\n') },
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join(''));

/** How to pick an old_string from whatever text the file holds when the edit runs. */
export type OldPick =
  | { readonly kind: 'slice'; readonly start: number; readonly length: number; readonly swapEols: boolean }
  | { readonly kind: 'literal'; readonly value: string };

export const oldPickArb: fc.Arbitrary<OldPick> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('slice' as const),
      start: fc.nat(),
      length: fc.integer({ min: 1, max: 8 }),
      swapEols: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('literal' as const), value: wordArb.filter((w) => w.length > 0) }) },
);

/** Resolves a pick against `text`, on code-point boundaries so no surrogate pair is split. */
export function pickOld(text: string, pick: OldPick): string {
  if (pick.kind === 'literal') return pick.value;
  const points = Array.from(text);
  if (points.length === 0) return 'a';
  const start = pick.start % points.length;
  const slice = points.slice(start, start + pick.length).join('');
  return pick.swapEols ? swapEols(slice) : slice;
}

/** LF becomes CRLF and CRLF becomes LF. */
export function swapEols(text: string): string {
  return text.replace(/\r?\n/g, (m) => (m === '\n' ? '\r\n' : '\n'));
}

/** Bytes that are not text: NUL, invalid UTF-8 (with the offset of the first bad byte), UTF-16 BOMs. */
export type NotText =
  | { readonly kind: 'nul'; readonly bytes: Uint8Array }
  | { readonly kind: 'utf8'; readonly bytes: Uint8Array; readonly offset: number }
  | { readonly kind: 'utf16'; readonly bytes: Uint8Array };

const INVALID_SEQUENCES: readonly (readonly number[])[] = [
  [0xff],
  [0xfe],
  [0xc0, 0x80], // overlong NUL
  [0xc3], // truncated two-byte sequence
  [0xe2, 0x82], // truncated three-byte sequence
  [0xed, 0xa0, 0x80], // UTF-16 surrogate encoded in UTF-8
  [0xf4, 0x90, 0x80, 0x80], // beyond U+10FFFF
  [0x80], // stray continuation byte
];

const plainTextArb = fc.array(wordArb, { maxLength: 8 }).map((w) => w.join('').replaceAll('\uFEFF', ''));

export const notTextArb: fc.Arbitrary<NotText> = fc.oneof(
  fc
    .tuple(plainTextArb, plainTextArb, fc.boolean())
    .map(([a, b, bom]) => ({ kind: 'nul' as const, bytes: withBom(bom, Buffer.from(`${a}\0${b}`)) })),
  fc.tuple(plainTextArb, fc.constantFrom(...INVALID_SEQUENCES), fc.constantFrom('', 'z', 'abc'), fc.boolean()).map(([a, bad, tail, bom]) => {
    const prefix = withBom(bom, Buffer.from(a));
    return { kind: 'utf8' as const, bytes: new Uint8Array(Buffer.concat([prefix, Buffer.from(bad), Buffer.from(tail)])), offset: prefix.byteLength };
  }),
  fc.tuple(plainTextArb, fc.boolean()).map(([a, le]) => {
    const body = Buffer.from(a || 'x', 'utf16le');
    if (!le) body.swap16();
    return { kind: 'utf16' as const, bytes: new Uint8Array(Buffer.concat([Buffer.from(le ? [0xff, 0xfe] : [0xfe, 0xff]), body])) };
  }),
);

function withBom(bom: boolean, body: Buffer): Uint8Array {
  return new Uint8Array(bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]) : body);
}

function isPlainLineText(s: string): boolean {
  return s.isWellFormed() && !/[\0\r\n]/.test(s);
}
