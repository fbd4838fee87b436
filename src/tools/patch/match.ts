// Finding a hunk's lines in a file: exact first, then in looser levels (as Codex's matcher does),
// each named so the result can say which one was needed.

export type MatchLevel = 'exact' | 'trailing-whitespace' | 'trimmed' | 'unicode';

export const MATCH_LEVELS: readonly MatchLevel[] = ['exact', 'trailing-whitespace', 'trimmed', 'unicode'];

/** What each level ignores, for result texts. */
export const LEVEL_NOTES: Record<MatchLevel, string> = {
  exact: 'exactly',
  'trailing-whitespace': 'ignoring trailing whitespace',
  trimmed: 'ignoring leading and trailing whitespace',
  unicode: 'ignoring whitespace and mapping typographic quotes, dashes and spaces to ASCII',
};

const DASHES = /[\u2010-\u2015\u2212\u2043\uFE58\uFE63\uFF0D]/g;
const SINGLE_QUOTES = /[\u2018-\u201B\u2032\u2035]/g;
const DOUBLE_QUOTES = /[\u201C-\u201F\u2033\u2036\u00AB\u00BB]/g;
const SPACES = /[\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]/g;

/** Typographic punctuation and spaces as the ASCII a model types. */
export function asciiPunctuation(s: string): string {
  return s.replace(DASHES, '-').replace(SINGLE_QUOTES, "'").replace(DOUBLE_QUOTES, '"').replace(SPACES, ' ');
}

const FOLD: Record<MatchLevel, (s: string) => string> = {
  exact: (s) => s,
  'trailing-whitespace': (s) => s.trimEnd(),
  trimmed: (s) => s.trim(),
  unicode: (s) => asciiPunctuation(s).trim(),
};

/** Folds every line once per level, so a search is a comparison of strings. */
export class LineIndex {
  private readonly folded = new Map<MatchLevel, readonly string[]>();
  constructor(readonly lines: readonly string[]) {}

  at(level: MatchLevel): readonly string[] {
    let f = this.folded.get(level);
    if (f === undefined) this.folded.set(level, (f = level === 'exact' ? this.lines : this.lines.map(FOLD[level])));
    return f;
  }

  /** Indices ≥ `from` (and ≤ `until`, when given) where `pattern` starts at `level`, at most `limit`. */
  find(pattern: readonly string[], level: MatchLevel, from: number, limit: number, until = Infinity): number[] {
    const lines = this.at(level);
    const want = pattern.map(FOLD[level]);
    const out: number[] = [];
    const last = Math.min(lines.length - want.length, until);
    for (let i = from; i <= last && out.length < limit; i++) {
      let k = 0;
      while (k < want.length && lines[i + k] === want[k]) k++;
      if (k === want.length) out.push(i);
    }
    return out;
  }
}

/** The first level at which `pattern` occurs at or after `from`, and where; undefined when none. */
export function seek(index: LineIndex, pattern: readonly string[], from: number): { at: number; level: MatchLevel } | undefined {
  for (const level of MATCH_LEVELS) {
    const [at] = index.find(pattern, level, from, 1);
    if (at !== undefined) return { at, level };
  }
  return undefined;
}
