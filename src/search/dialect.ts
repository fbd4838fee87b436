import ignore, { type Ignore } from 'ignore';
import braces from 'braces';
import picomatch from 'picomatch';
import { FsError } from '../seam/errors.js';
import { relativeInside } from '../seam/path.js';

/*
 * The one glob dialect of search: picomatch, with the options fast-glob gives it (`posix`,
 * `strictSlashes: false`), compiled in Unicode mode so that `?` and a class match one code point
 * (`?.ts` matches `😀.ts`). `glob`'s patterns and `ignore` list, and grep's `include`, all go
 * through `compileGlob`. `.gitignore` files follow git through the `ignore` package, with astral
 * characters mapped to single units first so that its `?` counts code points too.
 */

export interface GlobMatchOptions {
  /** Expand `{a,b}` alternatives (default true). */
  readonly braces?: boolean;
  /** `*`, `**` and `?` match names starting with a dot (default true). */
  readonly dot?: boolean;
}

export const MAX_GLOB_CHARS = 4096;

/** A regular expression matching the whole relative path. Invalid: FS_INVALID_ARGUMENT. */
export function compileGlob(pattern: string, options: GlobMatchOptions = {}): RegExp {
  if (pattern.length > MAX_GLOB_CHARS) {
    throw new FsError('FS_INVALID_ARGUMENT', `glob is ${pattern.length} characters long; the limit is ${MAX_GLOB_CHARS}`);
  }
  // Braces are expanded first, as fast-glob (micromatch) does, so each alternative gets
  // picomatch's full rules (its own brace handling loses the leading-dot rule of a `?` inside one).
  const alternatives = options.braces === false ? [pattern] : expandBraces(pattern);
  const opts = {
    posix: true,
    strictSlashes: false,
    dot: options.dot ?? true,
    nobrace: options.braces === false,
    debug: true, // an invalid result throws instead of silently matching nothing
  } as const;
  const join = (res: RegExp[], flags: string) =>
    res.length === 1 && res[0]!.flags === flags ? res[0]! : new RegExp(res.map((r) => `(?:${r.source})`).join('|'), flags);
  let legacy: RegExp[];
  try {
    legacy = alternatives.map((alt) => picomatch.makeRe(alt, opts));
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new FsError('FS_INVALID_ARGUMENT', `invalid glob ${JSON.stringify(pattern)}: ${detail}`);
  }
  try {
    // picomatch escapes an astral character one UTF-16 unit at a time (a `\` before each half),
    // which Unicode mode refuses: the units are put back together first.
    return join(legacy.map((re) => new RegExp(re.source.replace(ESCAPED_UNIT, '$1'), 'u')), 'u');
  } catch {
    // Unicode mode refuses some escapes picomatch passes through (`\-`); legacy mode takes them.
    return join(legacy, '');
  }
}

const ESCAPED_UNIT = /\\([\uD800-\uDFFF])/g;

/** Most alternatives a pattern's braces expand to; past it picomatch matches the braces itself. */
const MAX_BRACE_ALTERNATIVES = 256;

function expandBraces(pattern: string): string[] {
  if (!pattern.includes('{')) return [pattern];
  // A rough bound before expanding: each group at least doubles the count.
  if ((pattern.match(/\{/g)?.length ?? 0) > 8) return [pattern];
  try {
    const out = braces(pattern, { expand: true, nodupes: true, keepEscaping: true, rangeLimit: MAX_BRACE_ALTERNATIVES });
    return out.length > 0 && out.length <= MAX_BRACE_ALTERNATIVES ? out : [pattern];
  } catch {
    return [pattern];
  }
}

/** The same as compileGlob (kept under its older name). */
export function globToRegExp(pattern: string, options: GlobMatchOptions = {}): RegExp {
  return compileGlob(pattern, options);
}

/** True when the whole relative path matches the glob, in search's dialect. */
export function matchGlob(pattern: string, path: string, options: GlobMatchOptions = {}): boolean {
  return compileGlob(pattern, options).test(path);
}

/** The static directory a pattern starts in (`src/lib` for `src/lib/**\/*.ts`), or '' when none. */
export function staticBase(pattern: string): string {
  const scan = picomatch.scan(pattern);
  return scan.isGlob ? scan.base : '';
}

/** Segments a pattern can match at most (Infinity with `**`). */
export function patternDepth(pattern: string): number {
  if (pattern.includes('**')) return Infinity;
  // A brace set can hold `/`: take the longest alternative by counting every slash.
  return pattern.split('/').length;
}

// ---------------------------------------------------------------------------------------------
// .gitignore
// ---------------------------------------------------------------------------------------------

/** The rules of one ignore file, anchored at the directory holding it. */
export interface IgnoreRule {
  /** The directory the rules are relative to (absolute). */
  readonly base: string;
  readonly matcher: Ignore;
}

/**
 * The `ignore` package compiles without the `u` flag, so its `?` and classes see half an astral
 * character. Every astral character (and every private-use character, so nothing collides) is
 * mapped to one private-use unit, the same one in patterns and paths.
 */
const PRIVATE_START = 0xe000;
const PRIVATE_END = 0xf8ff;
const units = new Map<string, string>();
const NEEDS_MAPPING = /[\u{e000}-\u{f8ff}\u{10000}-\u{10ffff}]/u;
const MAPPED = /[\u{e000}-\u{f8ff}\u{10000}-\u{10ffff}]/gu;

function single(text: string): string {
  if (!NEEDS_MAPPING.test(text)) return text;
  return text.replace(MAPPED, (ch) => {
    let unit = units.get(ch);
    if (unit === undefined) {
      // Past 6,400 distinct characters the rest keep their two units (the old behaviour).
      if (PRIVATE_START + units.size > PRIVATE_END) return ch;
      unit = String.fromCharCode(PRIVATE_START + units.size);
      units.set(ch, unit);
    }
    return unit;
  });
}

/** The rules of an ignore file's text, anchored at `base` (git's syntax, through `ignore`). */
export function parseGitignore(text: string, base: string): IgnoreRule[] {
  const lines = text.split(/\r?\n/).map(single);
  return [{ base, matcher: ignore({ allowRelativePaths: true, ignorecase: false }).add(lines) }];
}

/**
 * Whether git ignores `path` under `rules` (outer files first, the last one deepest). A deeper
 * file's decision wins over an outer one's; within a file the last matching rule wins; and a
 * path inside an ignored directory is ignored whatever comes later (`dir/` then `!dir/keep`
 * ignores `dir/keep`), as git does not enter the directory.
 */
export function isIgnored(rules: readonly IgnoreRule[], path: string, isDirectory: boolean): boolean {
  if (rules.length === 0) return false;
  // An ignored ancestor directory hides everything below it.
  for (let i = path.indexOf('/', 1); i !== -1; i = path.indexOf('/', i + 1)) {
    if (decide(rules, path.slice(0, i), true) === true) return true;
  }
  return decide(rules, path, isDirectory) === true;
}

/** The decision of the deepest rule file that has one about `path` itself, if any. */
export function decide(rules: readonly IgnoreRule[], path: string, isDirectory: boolean): boolean | undefined {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!;
    const rel = relativeInside(rule.base, path);
    // A rule file speaks of what lies below its directory, not of the directory itself.
    if (rel === undefined || rel === '') continue;
    const result = rule.matcher.test(single(isDirectory ? `${rel}/` : rel));
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return undefined;
}
