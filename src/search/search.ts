import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { nestedQuantifier, overlappingAlternation } from './regex-safety.js';
import { DEFAULT_MATCH_TIMEOUT_MS, LineMatcher } from './regex-worker.js';
import { FsError, canonicalPath, isFsError, splitLines, throwIfAborted, toFsError, type FileSystem, type FsEntryType, type FsErrorCode, type FsOpOptions, type FsTarget } from '../seam/index.js';
import { describeType } from '../seam/path.js';
import { MAX_GLOB_CHARS, compileGlob, decide, parseGitignore, patternDepth, staticBase, type IgnoreRule } from './dialect.js';
import { comparePaths } from './paths.js';
import { compareNames } from '../seam/resolve.js';
import { walkFrom } from './walker.js';

/*
 * Search over the `FileSystem` contract. These are free functions, not methods: they need
 * nothing but `resolve`, `contains`, `stat`, `walk`, `readText` and `streamText`, so every provider (a third-party one
 * included) gets them without writing search code, and the contract stays small. Because every
 * access goes through the contract, an overlay's view is what is searched (whiteouts hidden,
 * upper files included) and a rooted provider's confinement applies to every path.
 */

export const DEFAULT_GLOB_LIMIT = 100_000;
export const DEFAULT_MAX_ENTRIES = 1_000_000;
export const DEFAULT_GREP_MAX_MATCHES = 10_000;
export const DEFAULT_GREP_MAX_LINE_BYTES = 4096;
export const DEFAULT_GREP_MAX_FILE_BYTES = 32 * 1024 * 1024;
export const DEFAULT_GREP_MAX_FILES = 1_000_000;
const DEFAULT_CONCURRENCY = 8;
export const MAX_RECORDED_SKIPS = 50;

/** Directories never walked by grep (and ignored by the glob tool). */
export const VCS_DIRECTORIES: readonly string[] = ['.git', '.svn', '.hg', '.bzr', '.jj', '.sl'];

/** Something a search passed over, and why. */
export interface SearchSkip {
  readonly path: string;
  /** `loop`: a directory that contains one the walk is already inside (a symlink cycle). */
  readonly reason: 'binary' | 'too-large' | 'unreadable' | 'loop';
  readonly code?: FsErrorCode;
  readonly message?: string;
}

export interface SkipCounts {
  readonly binary: number;
  readonly tooLarge: number;
  readonly unreadable: number;
  readonly loops: number;
}

// ---------------------------------------------------------------------------------------------
// glob
// ---------------------------------------------------------------------------------------------

export interface GlobOptions {
  /** Directory the patterns are relative to (default `fs.cwd`; relative values resolve against it). */
  readonly cwd?: string;
  readonly signal?: AbortSignal;
  /** `*` and `**` match names starting with a dot (default true). */
  readonly dot?: boolean;
  /** A pattern without `/` matches the base name at any depth, as in ripgrep (default false). */
  readonly matchBase?: boolean;
  /** Patterns (relative to `cwd`) excluded from the result; directories they match are not walked. */
  readonly ignore?: readonly string[];
  /** Match files only (default true); false also matches directories. */
  readonly onlyFiles?: boolean;
  /** Stop after this many matches; `truncated` tells (default 100,000). */
  readonly limit?: number;
  /** Stop after listing this many directory entries in all (default 1,000,000). */
  readonly maxEntries?: number;
  /** Directories listed at once (default 8). */
  readonly concurrency?: number;
  /**
   * Give every matched file its size and mtime (default true). false: a match has them only when
   * the provider's listing had them anyway, which on disk saves one stat per match (as fast-glob's
   * own default, `stats: false`).
   */
  readonly stats?: boolean;
}

export interface GlobMatch {
  /** Absolute path, in the same (unresolved) form as `cwd`. */
  readonly path: string;
  readonly target: FsTarget;
  readonly type: FsEntryType;
  readonly size?: number;
  /** When the provider reports it. */
  readonly mtimeMs?: number;
}

export interface GlobResult {
  /** The directory searched (absolute). */
  readonly cwd: string;
  /** In tree order (`comparePaths`). */
  readonly matches: GlobMatch[];
  /** Why the walk stopped early, if it did. */
  readonly truncated: false | 'limit' | 'entries';
  readonly skippedCounts: SkipCounts;
  /** The first few skipped directories. */
  readonly skipped: SearchSkip[];
}

/**
 * Files (and, with `onlyFiles: false`, directories) matching `pattern` under `cwd`: one `fs.walk`
 * from the patterns' common static base, each path tested with the search dialect (picomatch).
 * Symlinks to directories are followed; a link back into the walk is skipped (a cycle). Result
 * paths are absolute, in tree order.
 */
export async function glob(fs: FileSystem, pattern: string | readonly string[], options: GlobOptions = {}): Promise<GlobResult> {
  const patterns = typeof pattern === 'string' ? [pattern] : [...(pattern as readonly unknown[])];
  if (patterns.length === 0) throw new FsError('FS_INVALID_ARGUMENT', 'glob needs at least one pattern');
  for (const p of patterns) checkPattern(p, 'pattern');
  for (const p of options.ignore ?? []) checkPattern(p, 'ignore pattern');
  const limit = positiveInteger(options.limit, DEFAULT_GLOB_LIMIT, 'limit');
  const maxEntries = positiveInteger(options.maxEntries, DEFAULT_MAX_ENTRIES, 'maxEntries');
  positiveInteger(options.concurrency, DEFAULT_CONCURRENCY, 'concurrency');
  const signal = options.signal;
  const { dir } = await searchDirectory(fs, options.cwd, 'glob', signal);
  const what = `cannot glob ${patterns.map((p) => JSON.stringify(p)).join(', ')} in "${dir}"`;
  const dot = options.dot ?? true;
  const matchBase = options.matchBase ?? false;
  const onlyFiles = options.onlyFiles ?? true;
  const stats = options.stats ?? true;
  if (typeof stats !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `stats must be a boolean, got ${JSON.stringify(stats)}`);

  const tests = (patterns as string[]).map((p) => {
    const re = compileGlob(p, { dot });
    return matchBase && !p.includes('/') ? (rel: string, name: string) => re.test(name) : (rel: string) => re.test(rel);
  });
  const ignores = (options.ignore ?? []).map((p) => compileGlob(p, { dot: true }));
  const ignored = (rel: string) => ignores.some((re) => re.test(rel));
  const matches = (rel: string, name: string) => tests.some((t) => t(rel, name));

  // One walk, from the deepest directory every pattern starts in, no deeper than they reach.
  const bases = (patterns as string[]).map((p) => (matchBase && !p.includes('/') ? '' : staticBase(p)));
  const base = bases.reduce((a, b) => commonDir(a, b));
  const maxDepth = Math.max(...(patterns as string[]).map((p) => (matchBase && !p.includes('/') ? Infinity : patternDepth(p))));
  const baseDepth = base === '' ? 0 : base.split('/').length;
  const startPath = base === '' ? dir : posix.join(dir, base);
  const relOf = (rel: string) => (base === '' ? rel : `${base}/${rel}`);

  const counts = { unreadable: 0, loops: 0 };
  const skipped: SearchSkip[] = [];
  const found: GlobMatch[] = [];
  let truncated: GlobResult['truncated'] = false;
  try {
    let start: FsTarget;
    try {
      start = await fs.resolve(startPath, { ...(signal ? { signal } : {}) });
      const info = base === '' ? { type: 'directory' } : await fs.stat(start, { ...(signal ? { signal } : {}) });
      if (info?.type !== 'directory') return { cwd: dir, matches: [], truncated: false, skippedCounts: { binary: 0, tooLarge: 0, ...counts }, skipped };
    } catch (err) {
      if (base !== '' && (isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY'))) {
        return { cwd: dir, matches: [], truncated: false, skippedCounts: { binary: 0, tooLarge: 0, ...counts }, skipped };
      }
      throw err;
    }
    const walker = walkFrom(fs, start, startPath, {
      ...(signal ? { signal } : {}),
      maxEntries,
      maxDepth: maxDepth === Infinity ? Infinity : Math.max(maxDepth - baseDepth, 1),
      prune: (item) => ignores.length > 0 && ignored(relOf(item.rel)),
      // Only matches carry size and mtime, so only they may need a stat.
      wantsStats: stats ? (rel, name) => matches(relOf(rel), name) : () => false,
      onSkip: (skip) => {
        if (skip.reason === 'loop') counts.loops++;
        else counts.unreadable++;
        if (skipped.length < MAX_RECORDED_SKIPS) {
          skipped.push({ path: skip.path, reason: skip.reason, ...(skip.error ? { code: skip.error.code, message: skip.error.message } : {}) });
        }
      },
    });
    for await (const { path, rel: below, entry } of walker) {
      if (entry.type === 'other' || (onlyFiles && entry.type !== 'file')) continue;
      const rel = relOf(below);
      if (!matches(rel, entry.name) || (ignores.length > 0 && ignored(rel))) continue;
      if (found.length >= limit) {
        truncated = 'limit';
        break;
      }
      found.push({
        path,
        target: entry.target,
        type: entry.type,
        ...(entry.size === undefined ? {} : { size: entry.size }),
        ...(entry.mtimeMs === undefined ? {} : { mtimeMs: entry.mtimeMs }),
      });
    }
    if (truncated === false && walker.exceeded) truncated = 'entries';
  } catch (err) {
    if (signal?.aborted) throw new FsError('FS_ABORTED', `${what}: aborted`, { cause: err });
    throw toFsError(err, what);
  }
  throwIfAborted(signal, what);
  skipped.sort((a, b) => comparePaths(a.path, b.path));
  return { cwd: dir, matches: found, truncated, skippedCounts: { binary: 0, tooLarge: 0, ...counts }, skipped };
}

/** The longest common directory of two relative directories ('' for none). */
function commonDir(a: string, b: string): string {
  if (a === b) return a;
  const sa = a.split('/');
  const sb = b.split('/');
  let i = 0;
  while (i < sa.length && i < sb.length && sa[i] === sb[i]) i++;
  return sa.slice(0, i).join('/');
}


// ---------------------------------------------------------------------------------------------
// grep
// ---------------------------------------------------------------------------------------------

export interface GrepOptions {
  /** File or directory to search (default: `cwd`). Relative values resolve against `cwd`. */
  readonly path?: string;
  /** Base for a relative `path` (default `fs.cwd`). */
  readonly cwd?: string;
  /**
   * One glob selecting files: without `/` it matches the file name at any depth, with `/` the
   * path relative to the searched directory. Not applied when `path` is a file.
   */
  readonly include?: string;
  readonly signal?: AbortSignal;
  /** Skip what `.gitignore` files exclude (default true). */
  readonly gitignore?: boolean;
  /** Search names starting with a dot (default false). VCS directories are never searched. */
  readonly hidden?: boolean;
  /** Stop after this many matches; `truncated` tells (default 10,000). */
  readonly maxMatches?: number;
  /** UTF-8 bytes of a matched line kept in the result, cut on a character boundary (default 4096). */
  readonly maxLineBytes?: number;
  /** Files larger than this are skipped, not read (default 32 MiB). */
  readonly maxFileBytes?: number;
  /** Stop after reading this many files (default 1,000,000). */
  readonly maxFiles?: number;
  /** Files read at once (default 8); results keep their order regardless. */
  readonly concurrency?: number;
  /**
   * Matching runs in a worker thread; when it makes no progress on one batch of lines (a chunk
   * of a file) for this long, the search stops with FS_TIMEOUT (default 10,000 ms).
   */
  readonly matchTimeoutMs?: number;
}

export interface GrepMatch {
  /** Absolute path of the file. */
  readonly path: string;
  readonly target: FsTarget;
  /** 1-based line number. */
  readonly line: number;
  /** The line without its line ending (and without a BOM), cut to `maxLineBytes`. */
  readonly text: string;
  /** The line was longer than `maxLineBytes` and `text` is its start. */
  readonly lineTruncated: boolean;
}

export interface GrepResult {
  /** The file or directory searched (absolute). */
  readonly path: string;
  /** By path (tree order), then line. */
  readonly matches: GrepMatch[];
  /** Why the search stopped early, if it did: more matches exist, or the file budget ran out. */
  readonly truncated: false | 'matches' | 'files';
  readonly filesSearched: number;
  readonly skippedCounts: SkipCounts;
  /** The first few skipped files and directories. */
  readonly skipped: SearchSkip[];
}

/**
 * A regular expression for grep from a pattern string: Unicode mode when the pattern allows it,
 * else the legacy syntax (so `\-` or a lone `{` still work); a leading `(?i)`, `(?s)` or `(?m)`
 * becomes the flag. Invalid: FS_INVALID_ARGUMENT.
 */
export function compileSearchPattern(pattern: string): RegExp {
  if (typeof pattern !== 'string') {
    throw new FsError('FS_INVALID_ARGUMENT', `pattern must be a string, got ${describeType(pattern)}`);
  }
  let source = pattern;
  let flags = '';
  const inline = /^\(\?([ims]+)\)/.exec(source);
  if (inline) {
    flags = [...new Set(inline[1])].join('');
    source = source.slice(inline[0].length);
  }
  const quote = JSON.stringify(pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern);
  const nested = nestedQuantifier(source);
  if (nested !== undefined) {
    throw new FsError(
      'FS_INVALID_ARGUMENT',
      `pattern ${quote} repeats a group that itself repeats (${nested}); ` +
        'such patterns can take exponential time on a single line. Simplify it, e.g. "(a+)+" to "a+"',
    );
  }
  let regex: RegExp;
  try {
    regex = new RegExp(source, `${flags}u`);
  } catch {
    try {
      regex = new RegExp(source, flags);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      throw new FsError('FS_INVALID_ARGUMENT', `invalid regular expression ${JSON.stringify(pattern)}: ${detail}`);
    }
  }
  const overlapping = overlappingAlternation(source, regex.flags);
  if (overlapping !== undefined) {
    throw new FsError(
      'FS_INVALID_ARGUMENT',
      `pattern ${quote} repeats a choice whose alternatives can start with the same character (${overlapping}); ` +
        'such patterns can take exponential time on a single line. Make the alternatives distinct, e.g. "(\\w|_)+" to "\\w+"',
    );
  }
  return regex;
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes, never inside a character. */
export function cutUtf8(text: string, maxBytes: number): { text: string; cut: boolean } {
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, 'utf8') <= maxBytes) return { text, cut: false };
  // Each UTF-16 unit is at least one byte, so the first maxBytes units cover the cut point.
  let head = text.slice(0, maxBytes);
  if (head.length > 0 && isHighSurrogate(head.charCodeAt(head.length - 1))) head = head.slice(0, -1);
  const bytes = Buffer.from(head, 'utf8');
  if (bytes.byteLength <= maxBytes) return { text: head, cut: true };
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString('utf8'), cut: true };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

interface FileItem {
  readonly path: string;
  readonly target: FsTarget;
  readonly size?: number;
}

interface FileScan {
  readonly matches: GrepMatch[];
  readonly skip?: SearchSkip;
}

/**
 * Lines matching `regex` in the text files under `path`, read through the contract
 * (`streamText`), in tree order then line order. Binary files (FS_NOT_TEXT) and files over
 * `maxFileBytes` are skipped and counted; `.gitignore` rules and hidden names are honoured as
 * ripgrep does by default. Lines split at LF; a CR before the LF is not part of the line.
 */
export async function grep(fs: FileSystem, regex: RegExp | string, options: GrepOptions = {}): Promise<GrepResult> {
  const re = typeof regex === 'string' ? compileSearchPattern(regex) : statelessRegExp(regex);
  const maxMatches = positiveInteger(options.maxMatches, DEFAULT_GREP_MAX_MATCHES, 'maxMatches');
  const maxLineBytes = positiveInteger(options.maxLineBytes, DEFAULT_GREP_MAX_LINE_BYTES, 'maxLineBytes');
  const maxFileBytes = positiveInteger(options.maxFileBytes, DEFAULT_GREP_MAX_FILE_BYTES, 'maxFileBytes');
  const maxFiles = positiveInteger(options.maxFiles, DEFAULT_GREP_MAX_FILES, 'maxFiles');
  const concurrency = positiveInteger(options.concurrency, DEFAULT_CONCURRENCY, 'concurrency');
  const matchTimeoutMs = positiveInteger(options.matchTimeoutMs, DEFAULT_MATCH_TIMEOUT_MS, 'matchTimeoutMs');
  if (options.include !== undefined) checkPattern(options.include, 'include');
  const include = options.include === undefined ? undefined : includeMatcher(options.include);
  const useGitignore = options.gitignore ?? true;
  const hidden = options.hidden ?? false;
  const userSignal = options.signal;

  const base = canonicalPath(options.cwd ?? fs.cwd, fs.cwd);
  const rootPath = canonicalPath(options.path ?? base, base);
  const what = `cannot grep in "${rootPath}"`;
  throwIfAborted(userSignal, what);
  const rootTarget = await fs.resolve(rootPath, { ...(userSignal ? { signal: userSignal } : {}) });
  const rootInfo = await fs.stat(rootTarget, { ...(userSignal ? { signal: userSignal } : {}) });
  if (rootInfo === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);

  // One signal for the user's abort and our own early stop.
  const internal = new AbortController();
  const onAbort = () => internal.abort();
  const matcher = new LineMatcher(re, matchTimeoutMs, patternQuote(re));
  // An abort also stops a match in progress (the worker is terminated).
  internal.signal.addEventListener('abort', () => matcher.cancel(new FsError('FS_ABORTED', `${what}: aborted`)), { once: true });
  userSignal?.addEventListener('abort', onAbort, { once: true });
  const signal = internal.signal;

  const counts = { binary: 0, tooLarge: 0, unreadable: 0, loops: 0 };
  const skipped: SearchSkip[] = [];
  const record = (entry: SearchSkip) => {
    if (entry.reason === 'binary') counts.binary++;
    else if (entry.reason === 'too-large') counts.tooLarge++;
    else if (entry.reason === 'loop') counts.loops++;
    else counts.unreadable++;
    if (skipped.length < MAX_RECORDED_SKIPS) skipped.push(entry);
  };

  async function scan(file: FileItem): Promise<FileScan> {
    if (file.size !== undefined && file.size > maxFileBytes) {
      return { matches: [], skip: { path: file.path, reason: 'too-large', message: `${file.size} bytes` } };
    }
    const matches: GrepMatch[] = [];
    let lineNo = 0;
    // Whole lines go to the matcher (a worker) a chunk at a time; only the lines it names are
    // split out here.
    const batch = async (text: string, brokenAfter: boolean) => {
      const first = lineNo + 1;
      const { hits, lines } = await matcher.match(text, `"${file.path}" (from line ${first})`, brokenAfter);
      lineNo += lines;
      if (hits.length === 0) return;
      // The seam's one line splitter, as the worker used it.
      const all = splitLines(text, brokenAfter);
      for (const i of hits) {
        if (matches.length > maxMatches) break;
        const { text: kept, cut } = cutUtf8(all[i]!, maxLineBytes);
        matches.push({ path: file.path, target: file.target, line: first + i, text: kept, lineTruncated: cut });
      }
    };
    try {
      // No version is minted: search never guards a write with what it read.
      const stream = await fs.streamText(file.target, { signal, unversioned: true });
      if (stream.size > maxFileBytes) {
        return { matches: [], skip: { path: file.path, reason: 'too-large', message: `${stream.size} bytes` } };
      }
      const parts: string[] = [];
      for await (const chunk of stream.chunks) {
        const nl = chunk.lastIndexOf('\n');
        if (nl === -1) {
          parts.push(chunk);
          continue;
        }
        parts.push(chunk.slice(0, nl));
        await batch(parts.join(''), true);
        parts.length = 0;
        if (matches.length > maxMatches) return { matches };
        if (nl + 1 < chunk.length) parts.push(chunk.slice(nl + 1));
      }
      if (parts.length > 0) await batch(parts.join(''), false);
      return { matches };
    } catch (err) {
      const error = toFsError(err, `cannot read "${file.path}"`);
      if (error.code === 'FS_ABORTED' || error.code === 'FS_TIMEOUT') throw error;
      if (error.code === 'FS_NOT_TEXT') return { matches: [], skip: { path: file.path, reason: 'binary', code: error.code } };
      if (error.code === 'FS_TOO_LARGE') return { matches: [], skip: { path: file.path, reason: 'too-large', code: error.code } };
      return { matches: [], skip: { path: file.path, reason: 'unreadable', code: error.code, message: error.message } };
    }
  }

  async function ancestorRules(dir: string): Promise<IgnoreRule[]> {
    return useGitignore ? gitignoreRulesAbove(fs, dir, { signal }) : [];
  }

  /** The rules of an ignore file (`.gitignore` in `dir` unless named), anchored at `dir`. */
  function readRules(dir: string, target?: FsTarget): Promise<IgnoreRule[]> {
    return readIgnoreFile(fs, dir, { signal, ...(target ? { target } : {}) });
  }

  async function* files(): AsyncGenerator<FileItem> {
    if (rootInfo!.type === 'file') {
      yield { path: rootPath, target: rootTarget, ...(rootInfo!.size === undefined ? {} : { size: rootInfo!.size }) };
      return;
    }
    if (rootInfo!.type !== 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a file or directory`);
    // The rules in force in each directory entered (outer files first). A directory's own
    // `.gitignore` sorts among its first entries, so it is read when the walk reaches the first
    // entry at or past that name; an entry sorting before it (`-x`, `#y`) asks for it directly.
    const rulesIn = new Map<string, IgnoreRule[]>([[rootPath, await ancestorRules(rootPath)]]);
    const decided = new Set<string>();
    const pruned = new Set<string>();
    const rulesFor = async (dir: string, name: string, target: FsTarget): Promise<IgnoreRule[]> => {
      const inherited = rulesIn.get(dir) ?? [];
      if (!useGitignore || decided.has(dir)) return inherited;
      decided.add(dir);
      let own: IgnoreRule[] = [];
      if (name === '.gitignore') own = await readRules(dir, target);
      else if (compareNames(name, '.gitignore') < 0) own = await readRules(dir);
      if (own.length === 0) return inherited;
      const rules = [...inherited, ...own];
      rulesIn.set(dir, rules);
      return rules;
    };
    const walker = walkFrom(fs, rootTarget, rootPath, {
      signal,
      prune: (item) => pruned.has(item.path),
      // A file's size is known once it is opened.
      wantsStats: () => false,
      onSkip: (skip) => record({ path: skip.path, reason: skip.reason, ...(skip.error ? { code: skip.error.code, message: skip.error.message } : {}) }),
    });
    for await (const { path, rel, entry } of walker) {
      const parent = posix.dirname(path);
      const rules = await rulesFor(parent, entry.name, entry.target);
      if (entry.type === 'other') continue;
      const isDir = entry.type === 'directory';
      if ((isDir && VCS_DIRECTORIES.includes(entry.name)) || (!hidden && entry.name.startsWith('.')) || (rules.length > 0 && decide(rules, path, isDir) === true)) {
        if (isDir) pruned.add(path);
        continue;
      }
      if (isDir) {
        rulesIn.set(path, rules);
        continue;
      }
      if (include !== undefined && !include(rel, entry.name)) continue;
      yield { path, target: entry.target, ...(entry.size === undefined ? {} : { size: entry.size }) };
    }
  }

  const matches: GrepMatch[] = [];
  let truncated: GrepResult['truncated'] = false;
  let filesSearched = 0;
  const iterator = files();
  const window: Promise<FileScan>[] = [];
  const settle = (p: Promise<FileScan>) => {
    p.catch(() => undefined);
    return p;
  };
  try {
    let exhausted = false;
    while (true) {
      while (!exhausted && window.length < concurrency) {
        if (filesSearched >= maxFiles) {
          const more = await iterator.next();
          if (!more.done) truncated = 'files';
          exhausted = true;
          break;
        }
        const next = await iterator.next();
        if (next.done) {
          exhausted = true;
          break;
        }
        filesSearched++;
        window.push(settle(scan(next.value)));
      }
      const head = window.shift();
      if (head === undefined) break;
      const result = await head;
      if (result.skip) record(result.skip);
      for (const m of result.matches) matches.push(m);
      if (matches.length > maxMatches) {
        matches.length = maxMatches;
        truncated = 'matches';
        break;
      }
    }
  } catch (err) {
    if (userSignal?.aborted) throw new FsError('FS_ABORTED', `${what}: aborted`, { cause: err });
    throw toFsError(err, what);
  } finally {
    // Stops files still being read once the cap is reached; their results are discarded.
    internal.abort();
    // And waits for them: no read of this search goes on after it returned.
    await Promise.allSettled(window);
    matcher.release();
    userSignal?.removeEventListener('abort', onAbort);
    await iterator.return(undefined).catch(() => undefined);
  }
  throwIfAborted(userSignal, what);
  if (truncated === 'matches') filesSearched -= window.length;
  matches.sort((a, b) => comparePaths(a.path, b.path) || a.line - b.line);
  skipped.sort((a, b) => comparePaths(a.path, b.path));
  return { path: rootPath, matches, truncated, filesSearched, skippedCounts: counts, skipped };
}

/**
 * The `.gitignore` rules that apply inside `dir` from above it: the repository's
 * `.git/info/exclude` (the repository being the nearest ancestor holding `.git`), then every
 * ancestor's `.gitignore` from the outermost down, excluding `dir`'s own. Shared by grep and the
 * list tool, so there is one reading of ignore files.
 */
export async function gitignoreRulesAbove(fs: FileSystem, dir: string, options: FsOpOptions = {}): Promise<IgnoreRule[]> {
  const { signal } = options;
  const chain: string[] = [];
  let repository: string | undefined;
  // Up to the repository root (a directory holding `.git`) or the filesystem's root.
  for (let d = dir; ; d = posix.dirname(d)) {
    if (d !== dir) chain.unshift(d);
    if (await pathExists(fs, posix.join(d, '.git'), signal)) {
      repository = d;
      break;
    }
    if (d === '/' || (fs.root !== undefined && d === fs.root)) break;
  }
  // The repository's own exclude file comes first: every .gitignore rule overrides it.
  const rules: IgnoreRule[] = repository === undefined ? [] : await readIgnoreFile(fs, repository, { file: '.git/info/exclude', ...(signal ? { signal } : {}) });
  for (const d of chain) rules.push(...(await readIgnoreFile(fs, d, signal ? { signal } : {})));
  return rules;
}

/**
 * The rules of an ignore file (`.gitignore` in `dir` unless `file` names another), anchored at
 * `dir`; none when it is missing or unreadable (an ignore file never fails a search).
 */
export async function readIgnoreFile(
  fs: FileSystem,
  dir: string,
  options: FsOpOptions & { readonly target?: FsTarget; readonly file?: string } = {},
): Promise<IgnoreRule[]> {
  const { signal } = options;
  const path = posix.join(dir, options.file ?? '.gitignore');
  try {
    const t = options.target ?? (await fs.resolve(path, { signal }));
    if (options.target === undefined && (await fs.stat(t, { signal }))?.type !== 'file') return [];
    return parseGitignore((await fs.readText(t, { signal })).text, dir);
  } catch (err) {
    if (isFsError(err, 'FS_ABORTED')) throw err;
    return [];
  }
}

async function pathExists(fs: FileSystem, path: string, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    return (await fs.stat(await fs.resolve(path, { signal }), { signal })) !== undefined;
  } catch (err) {
    if (isFsError(err, 'FS_ABORTED')) throw err;
    return false;
  }
}

function includeMatcher(include: string): (relative: string, name: string) => boolean {
  let re: RegExp;
  try {
    re = compileGlob(include, { dot: true });
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new FsError('FS_INVALID_ARGUMENT', `invalid include glob ${JSON.stringify(include)}: ${detail}`);
  }
  return include.includes('/') ? (relative) => re.test(relative) : (_relative, name) => re.test(name);
}

function patternQuote(re: RegExp): string {
  const source = re.source;
  return JSON.stringify(source.length > 200 ? `${source.slice(0, 200)}…` : source);
}

function statelessRegExp(regex: RegExp): RegExp {
  if (!(regex instanceof RegExp)) {
    throw new FsError('FS_INVALID_ARGUMENT', `regex must be a RegExp or a string, got ${describeType(regex)}`);
  }
  // `g` and `y` make test() stateful across lines.
  return regex.global || regex.sticky ? new RegExp(regex.source, regex.flags.replace(/[gy]/g, '')) : regex;
}

// ---------------------------------------------------------------------------------------------
// shared
// ---------------------------------------------------------------------------------------------

async function searchDirectory(
  fs: FileSystem,
  cwd: string | undefined,
  verb: string,
  signal: AbortSignal | undefined,
): Promise<{ dir: string; target: FsTarget }> {
  const dir = canonicalPath(cwd ?? fs.cwd, fs.cwd);
  throwIfAborted(signal, `cannot ${verb} in "${dir}"`);
  const target = await fs.resolve(dir, { ...(signal ? { signal } : {}) });
  const info = await fs.stat(target, { ...(signal ? { signal } : {}) });
  if (info === undefined) throw new FsError('FS_NOT_FOUND', `cannot ${verb} in "${dir}": not found`);
  if (info.type !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `cannot ${verb} in "${dir}": not a directory`);
  return { dir, target };
}

function checkPattern(pattern: unknown, name: string): asserts pattern is string {
  if (typeof pattern !== 'string') throw new FsError('FS_INVALID_ARGUMENT', `${name} must be a string, got ${describeType(pattern)}`);
  if (pattern.length === 0) throw new FsError('FS_INVALID_ARGUMENT', `${name} must be a non-empty glob`);
  if (pattern.includes('\0')) throw new FsError('FS_INVALID_ARGUMENT', `${name} ${JSON.stringify(pattern)} contains a NUL byte`);
  // The matcher below refuses long patterns with a plain Error; say so as an argument error first.
  if (pattern.length > MAX_GLOB_CHARS) {
    throw new FsError('FS_INVALID_ARGUMENT', `${name} is ${pattern.length} characters long; the limit is ${MAX_GLOB_CHARS}`);
  }
}


function positiveInteger(value: unknown, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new FsError('FS_INVALID_ARGUMENT', `${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}
