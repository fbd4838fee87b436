/*
 * An independent glob and .gitignore matcher, written from the specs, kept as the conformance
 * kit's oracle for search (S1): search itself matches with picomatch and the \`ignore\` package.
 */
import { relativeInside } from '../seam/path.js';

/**
 * Glob matching on `/`-separated relative paths, used where fast-glob cannot be (a `.gitignore`
 * discovered mid-walk, grep's `include`) and as the independent reference in the conformance
 * suite. Syntax: `*` and `?` (never `/`), `**` as a whole segment (any number of segments),
 * `[abc]`, `[a-z]`, `[!x]`/`[^x]`, `{a,b}` (when `braces`), `\` escapes. A leading dot is an
 * ordinary character: `*` matches `.env`. A trailing `/**` matches what is inside a directory,
 * not the directory itself (fast-glob is inconsistent there: `a/**` matches a file `a`, while
 * a pattern starting with a wildcard segment does not).
 */
export interface GlobMatchOptions {
  /** Expand `{a,b}` alternatives (default true; `.gitignore` has none). */
  readonly braces?: boolean;
}

export function globToRegExp(glob: string, options: GlobMatchOptions = {}): RegExp {
  return new RegExp(`^${compileGlob(glob, options.braces ?? true)}$`, 'su');
}

/** True when the whole relative path matches the glob. */
export function matchGlob(glob: string, path: string, options: GlobMatchOptions = {}): boolean {
  return globToRegExp(glob, options).test(path);
}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/]/g;

function escapeRegex(text: string): string {
  return text.replace(REGEX_SPECIAL, '\\$&');
}

function compileGlob(glob: string, braces: boolean): string {
  let out = '';
  let i = 0;
  const n = glob.length;
  while (i < n) {
    const ch = glob[i]!;
    if (ch === '\\') {
      const next = glob.codePointAt(i + 1);
      if (next === undefined) {
        out += '\\\\';
        i++;
      } else {
        const s = String.fromCodePoint(next);
        out += escapeRegex(s);
        i += 1 + s.length;
      }
      continue;
    }
    if (ch === '*') {
      let j = i;
      while (glob[j] === '*') j++;
      const atStart = i === 0 || glob[i - 1] === '/';
      const atEnd = j === n || glob[j] === '/';
      if (j - i >= 2 && atStart && atEnd) {
        if (j === n) {
          out += '.*';
          i = j;
        } else {
          // `**/` : zero or more whole segments.
          out += '(?:.*/)?';
          i = j + 1;
        }
      } else {
        out += '[^/]*';
        i = j;
      }
      continue;
    }
    if (ch === '?') {
      out += '[^/]';
      i++;
      continue;
    }
    if (ch === '[') {
      const cls = parseClass(glob, i);
      if (cls !== undefined) {
        out += cls.source;
        i = cls.end;
        continue;
      }
      out += '\\[';
      i++;
      continue;
    }
    if (ch === '{' && braces) {
      const alts = parseBraces(glob, i);
      if (alts !== undefined) {
        out += `(?:${alts.parts.map((p) => compileGlob(p, braces)).join('|')})`;
        i = alts.end;
        continue;
      }
    }
    const cp = glob.codePointAt(i)!;
    const s = String.fromCodePoint(cp);
    out += escapeRegex(s);
    i += s.length;
  }
  return out;
}

/** A `[...]` class starting at `start`, or undefined when it is not closed (then `[` is literal). */
function parseClass(glob: string, start: number): { source: string; end: number } | undefined {
  let i = start + 1;
  let negate = false;
  if (glob[i] === '!' || glob[i] === '^') {
    negate = true;
    i++;
  }
  let body = '';
  let first = true;
  while (i < glob.length) {
    const ch = glob[i]!;
    if (ch === ']' && !first) {
      if (body === '') return undefined;
      // A class never matches the separator.
      return { source: negate ? `[^/${body}]` : `(?!/)[${body}]`, end: i + 1 };
    }
    first = false;
    if (ch === '\\' && i + 1 < glob.length) {
      const s = String.fromCodePoint(glob.codePointAt(i + 1)!);
      body += escapeClassChar(s);
      i += 1 + s.length;
      continue;
    }
    if (ch === '-' && body !== '' && glob[i + 1] !== ']' && i + 1 < glob.length) {
      body += '-';
      i++;
      continue;
    }
    const s = String.fromCodePoint(glob.codePointAt(i)!);
    body += escapeClassChar(s);
    i += s.length;
  }
  return undefined;
}

function escapeClassChar(s: string): string {
  return /[\\\]^[\-/]/.test(s) ? `\\${s}` : s;
}

/** `{a,b,...}` starting at `start`, with nesting; undefined when unclosed or without a comma. */
function parseBraces(glob: string, start: number): { parts: string[]; end: number } | undefined {
  let depth = 0;
  const parts: string[] = [];
  let from = start + 1;
  for (let i = start; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '{') depth++;
    else if (ch === '}') {
      depth--;
      if (depth === 0) {
        parts.push(glob.slice(from, i));
        return parts.length > 1 ? { parts, end: i + 1 } : undefined;
      }
    } else if (ch === ',' && depth === 1) {
      parts.push(glob.slice(from, i));
      from = i + 1;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// .gitignore
// ---------------------------------------------------------------------------------------------

export interface IgnoreRule {
  /** Directory (absolute) of the `.gitignore` the rule came from. */
  readonly base: string;
  readonly negate: boolean;
  readonly dirOnly: boolean;
  readonly regex: RegExp;
  /** The line as written, for diagnostics. */
  readonly source: string;
}

/**
 * Parses one `.gitignore` in directory `base`: blank lines and `#` comments skipped, `!`
 * negates, a trailing `/` matches directories only, a pattern with a `/` before its end is
 * anchored to `base`, one without matches a name at any depth below it. Trailing spaces are
 * dropped unless escaped.
 */
export function parseGitignore(text: string, base: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split('\n')) {
    let line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    line = trimTrailingSpaces(line);
    if (line === '' || line.startsWith('#')) continue;
    let negate = false;
    if (line.startsWith('!')) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith('\\!') || line.startsWith('\\#')) {
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith('/') && !line.endsWith('\\/')) {
      dirOnly = true;
      line = line.replace(/\/+$/, '');
    }
    if (line === '') continue;
    const anchored = line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    if (line === '') continue;
    const body = compileGlob(line, false);
    const regex = new RegExp(anchored ? `^${body}$` : `^(?:.*/)?${body}$`, 'su');
    rules.push({ base, negate, dirOnly, regex, source: raw });
  }
  return rules;
}

function trimTrailingSpaces(line: string): string {
  let end = line.length;
  while (end > 0 && line[end - 1] === ' ' && line[end - 2] !== '\\') end--;
  return line.slice(0, end);
}

/**
 * Whether `path` (absolute) is ignored by `rules` (ordered: outer `.gitignore` first, lines in
 * order). The last matching rule decides, as in git.
 */
export function isIgnored(rules: readonly IgnoreRule[], path: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const rule of rules) {
    if (rule.dirOnly && !isDirectory) continue;
    const rel = relativeInside(rule.base, path);
    if (rel === undefined || rel === '') continue;
    if (rule.regex.test(rel)) ignored = !rule.negate;
  }
  return ignored;
}

// Tree order and relative paths are search's own (src/search/paths.ts); only matching is independent here.
export { comparePaths, relativeTo } from '../search/paths.js';
