import { setMaxListeners } from 'node:events';
import type { Candidates } from './grep-bytes.js';
import { streamLines } from './grep-large.js';
import { requiredLiteral } from './literal.js';
import { FsError, canonicalPath, isFsError, splitLines, textStreamOf, throwIfAborted, toFsError, type FileSystem, type FsTarget } from '../seam/index.js';
import { grepFiles, type FileItem, type FileSource } from './grep-files.js';
import { readAhead, type ReadItem } from './grep-reads.js';
import { cannotMatch, givenContent, narrowing, type Narrowed } from './narrow.js';
import { comparePaths } from './paths.js';
import { compileSearchPattern, cutUtf8, includeMatcher, patternQuote, statelessRegExp } from './pattern.js';
import { DEFAULT_MATCH_TIMEOUT_MS, LineMatcher } from './regex-worker.js';
import { DEFAULT_CONCURRENCY, MAX_RECORDED_SKIPS, checkPattern, positiveInteger, type SearchSkip, type SkipCounts } from './shared.js';

export const DEFAULT_GREP_MAX_MATCHES = 10_000;
export const DEFAULT_GREP_MAX_LINE_BYTES = 4096;
export const DEFAULT_GREP_MAX_FILE_BYTES = 32 * 1024 * 1024;
export const DEFAULT_GREP_MAX_FILES = 1_000_000;

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

interface FileScan {
  readonly matches: GrepMatch[];
  readonly skip?: SearchSkip;
}

/** What the parts of one grep share. */
interface GrepContext extends FileSource {
  readonly matcher: LineMatcher;
  /** Text every match contains, when the pattern says so: large files are searched for it on their bytes. */
  readonly literal: Uint8Array | undefined;
  readonly maxMatches: number;
  readonly maxLineBytes: number;
  readonly maxFileBytes: number;
  /** The files the store said can hold a match, when it could say (asked while the walk starts). */
  readonly narrowed: Promise<Narrowed | undefined>;
  /** Stops reads still going on (the search has what it needs, or failed). */
  stop(): void;
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
  const userSignal = options.signal;

  const base = canonicalPath(options.cwd ?? fs.cwd, fs.cwd);
  const rootPath = canonicalPath(options.path ?? base, base);
  const what = `cannot grep in "${rootPath}"`;
  throwIfAborted(userSignal, what);
  const rootTarget = await fs.resolve(rootPath, { ...(userSignal ? { signal: userSignal } : {}) });
  const rootInfo = await fs.stat(rootTarget, { versioned: false, ...(userSignal ? { signal: userSignal } : {}) });
  if (rootInfo === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);

  // One signal for the user's abort and our own early stop. Every read in flight listens to it (a
  // store adds a listener or two a call, removed when the call settles): that is no leak.
  const internal = new AbortController();
  setMaxListeners(LISTENERS_PER_READ * (concurrency + 2), internal.signal);
  // The store's query has a signal of its own: the scan's early stop must not cut it short, since
  // its answer (or failure) counts even when the walk found no file.
  const query = new AbortController();
  // Not awaited here: the store answers while the walk's first request runs.
  const narrowed = rootInfo.type === 'directory' ? narrowing(fs, rootTarget, re, maxFileBytes, query.signal) : Promise.resolve(undefined);
  narrowed.catch(() => undefined);
  const onAbort = () => {
    internal.abort();
    query.abort();
  };
  const matcher = new LineMatcher(re, matchTimeoutMs, patternQuote(re));
  // An abort also stops a match in progress (the worker is terminated).
  internal.signal.addEventListener('abort', () => matcher.cancel(new FsError('FS_ABORTED', `${what}: aborted`)), { once: true });
  userSignal?.addEventListener('abort', onAbort, { once: true });

  const counts = { binary: 0, tooLarge: 0, unreadable: 0, loops: 0 };
  const skipped: SearchSkip[] = [];
  const record = (entry: SearchSkip) => {
    if (entry.reason === 'binary') counts.binary++;
    else if (entry.reason === 'too-large') counts.tooLarge++;
    else if (entry.reason === 'loop') counts.loops++;
    else counts.unreadable++;
    if (skipped.length < MAX_RECORDED_SKIPS) skipped.push(entry);
  };
  const ctx: GrepContext = {
    fs,
    what,
    literal: requiredLiteral(re),
    rootPath,
    rootTarget,
    rootInfo,
    signal: internal.signal,
    matcher,
    maxMatches,
    maxLineBytes,
    maxFileBytes,
    narrowed,
    useGitignore: options.gitignore ?? true,
    hidden: options.hidden ?? false,
    include,
    record,
    stop: () => internal.abort(),
  };
  let found: { matches: GrepMatch[]; truncated: GrepResult['truncated']; filesSearched: number };
  let answered = false;
  try {
    found = await scanAll(ctx, concurrency, maxFiles);
    // Its failure counts even when no file was read.
    await narrowed;
    answered = true;
  } catch (err) {
    if (userSignal?.aborted) throw new FsError('FS_ABORTED', `${what}: aborted`, { cause: err });
    throw toFsError(err, what);
  } finally {
    matcher.release();
    userSignal?.removeEventListener('abort', onAbort);
    // No request of this search goes on after it returned: a query still running when the scan
    // failed is cut short and waited for. One that answered is not aborted: aborting a signal
    // rewrites its state, and V8 threw away the code that had read it (see throwIfAborted).
    if (!answered) query.abort();
    await narrowed.catch(() => undefined);
  }
  throwIfAborted(userSignal, what);
  const { matches, truncated, filesSearched } = found;
  matches.sort((a, b) => comparePaths(a.path, b.path) || a.line - b.line);
  skipped.sort((a, b) => comparePaths(a.path, b.path));
  return { path: rootPath, matches, truncated, filesSearched, skippedCounts: counts, skipped };
}

const NO_MATCH: Promise<FileScan> = Promise.resolve({ matches: [] });

/** The abort listeners one read may hold on grep's signal while it runs. */
const LISTENERS_PER_READ = 8;

/** Reads up to `concurrency` files at once, taking their results in order, until a budget runs out. */
async function scanAll(
  ctx: GrepContext,
  concurrency: number,
  maxFiles: number,
): Promise<{ matches: GrepMatch[]; truncated: GrepResult['truncated']; filesSearched: number }> {
  const matches: GrepMatch[] = [];
  let truncated: GrepResult['truncated'] = false;
  let filesSearched = 0;
  const iterator = withReads(ctx, grepFiles(ctx));
  // The files of the run taken from the iterator and not yet started.
  let run: ReadItem[] = [];
  let taken = 0;
  let walked = false;
  /** Takes the next run when this one is used up; false at the end. */
  const more = async (): Promise<boolean> => {
    const next = await iterator.next();
    if (next.done) {
      walked = true;
      return false;
    }
    run = next.value;
    taken = 0;
    return true;
  };
  const window: Promise<FileScan>[] = [];
  const settle = (p: Promise<FileScan>) => {
    p.catch(() => undefined);
    return p;
  };
  try {
    let exhausted = false;
    while (true) {
      while (!exhausted && window.length < concurrency) {
        // Awaited only between runs: a promise per run, not per file.
        if (taken === run.length && !(await more())) {
          exhausted = true;
          break;
        }
        if (filesSearched >= maxFiles) {
          truncated = 'files';
          exhausted = true;
          break;
        }
        filesSearched++;
        const file = run[taken++]!;
        // Read ahead and found to be text without the pattern's literal: nothing to match.
        window.push(file.given === null ? NO_MATCH : settle(scanFile(ctx, file)));
      }
      const head = window.shift();
      if (head === undefined) break;
      const result = await head;
      if (result.skip) ctx.record(result.skip);
      for (const m of result.matches) matches.push(m);
      if (matches.length > ctx.maxMatches) {
        matches.length = ctx.maxMatches;
        truncated = 'matches';
        break;
      }
    }
  } finally {
    // Stops files still being read once the cap is reached; their results are discarded. A scan
    // that took every file has none in flight, and leaves the signal as it is (as above).
    if (!walked || window.length > 0) ctx.stop();
    // And waits for them: no read of this search goes on after it returned.
    await Promise.allSettled(window);
    await iterator.return(undefined).catch(() => undefined);
  }
  if (truncated === 'matches') filesSearched -= window.length;
  return { matches, truncated, filesSearched };
}

/** The walk's files, with their contents read ahead where the filesystem reads many at once and the store does not narrow. */
function withReads(ctx: GrepContext, files: AsyncGenerator<FileItem[]>): AsyncGenerator<ReadItem[]> {
  const { fs, literal, maxFileBytes, signal } = ctx;
  if (fs.searchReads === undefined || fs.searchCandidates !== undefined) return files;
  return readAhead(fs, files, { maxBytes: maxFileBytes, ...(literal !== undefined && literal.byteLength > 0 ? { contains: literal } : {}) }, signal);
}

/** The matching lines of one file, or why it was skipped. */
async function scanFile(ctx: GrepContext, file: ReadItem): Promise<FileScan> {
  const { maxFileBytes, maxMatches } = ctx;
  const narrowed = await ctx.narrowed;
  if (cannotMatch(ctx.fs, narrowed, file.target)) return { matches: [] };
  if (file.size !== undefined && file.size > maxFileBytes) {
    return { matches: [], skip: { path: file.path, reason: 'too-large', message: `${file.size} bytes` } };
  }
  const matches: GrepMatch[] = [];
  let lineNo = 0;
  // Whole lines go to the matcher (a worker) a chunk at a time; only the lines it names are
  // split out here. `numbers` gives the line numbers of lines that are not consecutive.
  const batch = async (text: string, brokenAfter: boolean, first = lineNo + 1, numbers?: number[]) => {
    const { hits, lines } = await ctx.matcher.match(text, `"${file.path}" (from line ${first})`, brokenAfter);
    lineNo += lines;
    if (hits.length === 0) return;
    // The seam's one line splitter, as the worker used it.
    const all = splitLines(text, brokenAfter);
    for (const i of hits) {
      if (matches.length > maxMatches) break;
      const { text: kept, cut } = cutUtf8(all[i]!, ctx.maxLineBytes);
      matches.push({ path: file.path, target: file.target, line: numbers?.[i] ?? first + i, text: kept, lineTruncated: cut });
    }
  };
  try {
    // No version is minted: search never guards a write with what it read.
    let stream;
    try {
      const given = file.given ?? givenContent(narrowed, file.target);
      // Bytes the store returned with the candidates: what this read would give, without the read.
      stream = given === undefined ? await ctx.fs.streamText(file.target, { signal: ctx.signal, unversioned: true }) : textStreamOf(file.target, given, ctx.signal);
    } catch (err) {
      if (!isFsError(err, 'FS_TOO_LARGE')) throw err;
      // Over the text limit but within maxFileBytes: streamed in batches of whole lines.
      const literal = ctx.literal && { bytes: ctx.literal, candidates: (c: Candidates) => batch(c.text, c.brokenAfter, c.first, c.numbers) };
      const sink = { batch, ...(literal ? { literal } : {}) };
      const skip = await streamLines(ctx.fs, file.target, file.path, ctx.signal, sink, () => matches.length > maxMatches, maxFileBytes);
      return skip === undefined ? { matches } : { matches: [], skip: { path: file.path, reason: 'too-large', message: skip } };
    }
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
