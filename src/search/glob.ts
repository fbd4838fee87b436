import { posix } from 'node:path';
import { FsError, isFsError, throwIfAborted, toFsError, type FileSystem, type FsEntryType, type FsTarget } from '../seam/index.js';
import { compileGlob, decide, patternDepth, staticBase } from './dialect.js';
import { ignoreRulesWalk, type IgnoreRulesWalk } from './ignore-files.js';
import { comparePaths } from './paths.js';
import { DEFAULT_CONCURRENCY, MAX_RECORDED_SKIPS, checkPattern, positiveInteger, searchDirectory, type SearchSkip, type SkipCounts } from './shared.js';
import { walkFrom, type WalkItem, type Walker } from './walker.js';

export const DEFAULT_GLOB_LIMIT = 100_000;
export const DEFAULT_MAX_ENTRIES = 1_000_000;

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
  /**
   * Leave out what `.gitignore` files and the repository's `.git/info/exclude` exclude, as grep
   * does (default true); `ignored` counts the matches left out.
   */
  readonly gitignore?: boolean;
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
  /** Matches left out because ignore rules exclude them (see `gitignore`); 0 with `gitignore: false`. */
  readonly ignored: number;
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
  const stats = options.stats ?? true;
  if (typeof stats !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `stats must be a boolean, got ${JSON.stringify(stats)}`);
  const gitignore = options.gitignore ?? true;
  if (typeof gitignore !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `gitignore must be a boolean, got ${JSON.stringify(gitignore)}`);
  const plan = planGlob(patterns as string[], options);
  const counts = { unreadable: 0, loops: 0 };
  const skipped: SearchSkip[] = [];
  const done = (found: GlobMatch[], truncated: GlobResult['truncated'], ignored: number): GlobResult => ({
    cwd: dir,
    matches: found,
    truncated,
    ignored,
    skippedCounts: { binary: 0, tooLarge: 0, ...counts },
    skipped,
  });
  let result: Collected | undefined;
  try {
    const startPath = plan.base === '' ? dir : posix.join(dir, plan.base);
    const start = await startOf(fs, startPath, plan.base, signal);
    if (start === undefined) return done([], false, 0);
    const run = async (endings: readonly string[] | undefined) => {
      counts.unreadable = counts.loops = skipped.length = 0;
      const walker = walkFrom(fs, start, startPath, {
        ...(signal ? { signal } : {}),
        maxEntries,
        maxDepth: plan.maxDepth === Infinity ? Infinity : Math.max(plan.maxDepth - plan.baseDepth, 1),
        prune: (item) => plan.ignores && plan.ignored(plan.relOf(item.rel)),
        // Only matches carry size and mtime, so only they may need a stat.
        wantsStats: stats ? (rel, name) => plan.matches(plan.relOf(rel), name) : () => false,
        ...(endings ? { fileNameEndsWith: endings } : {}),
        onSkip: (skip) => {
          if (skip.reason === 'loop') counts.loops++;
          else counts.unreadable++;
          if (skipped.length < MAX_RECORDED_SKIPS) {
            skipped.push({ path: skip.path, reason: skip.reason, ...(skip.error ? { code: skip.error.code, message: skip.error.message } : {}) });
          }
        },
      });
      const rules = await ignoreRulesWalk(fs, startPath, gitignore, signal);
      return { walker, found: await collect(walker, plan, options.onlyFiles ?? true, limit, ignoredBy(rules)) };
    };
    // A provider that leaves out other names must still list the ignore files.
    const endings = plan.endings && gitignore ? [...plan.endings, '.gitignore'] : plan.endings;
    const narrowed = await run(endings);
    // Where files left out in storage would have reached the entry cap, the exact cap needs them all.
    result = narrowed.walker.overNarrowed ? (await run(undefined)).found : narrowed.found;
  } catch (err) {
    if (signal?.aborted) throw new FsError('FS_ABORTED', `${what}: aborted`, { cause: err });
    throw toFsError(err, what);
  }
  throwIfAborted(signal, what);
  skipped.sort((a, b) => comparePaths(a.path, b.path));
  return done(result.found, result.truncated, result.ignored);
}

/** The compiled patterns of a glob, and the one walk they need. */
interface GlobPlan {
  /** The deepest directory every pattern starts in, relative to `cwd` ('' for `cwd` itself). */
  readonly base: string;
  readonly baseDepth: number;
  /** How deep below `cwd` the patterns reach. */
  readonly maxDepth: number;
  /** There are ignore patterns. */
  readonly ignores: boolean;
  ignored(rel: string): boolean;
  matches(rel: string, name: string): boolean;
  /** A path relative to the walk's start, made relative to `cwd`. */
  relOf(rel: string): string;
  /** Every match is a directory, a link or a file whose name ends with one of these (see `nameEndings`). */
  readonly endings: readonly string[] | undefined;
}

function planGlob(patterns: readonly string[], options: GlobOptions): GlobPlan {
  const dot = options.dot ?? true;
  const matchBase = options.matchBase ?? false;
  const tests = patterns.map((p) => {
    const re = compileGlob(p, { dot });
    return matchBase && !p.includes('/') ? (rel: string, name: string) => re.test(name) : (rel: string) => re.test(rel);
  });
  const ignores = (options.ignore ?? []).map((p) => compileGlob(p, { dot: true }));
  // One walk, from the deepest directory every pattern starts in, no deeper than they reach.
  const bases = patterns.map((p) => (matchBase && !p.includes('/') ? '' : staticBase(p)));
  const base = bases.reduce((a, b) => commonDir(a, b));
  return {
    base,
    baseDepth: base === '' ? 0 : base.split('/').length,
    maxDepth: Math.max(...patterns.map((p) => (matchBase && !p.includes('/') ? Infinity : patternDepth(p)))),
    ignores: ignores.length > 0,
    ignored: (rel) => ignores.some((re) => re.test(rel)),
    matches: (rel, name) => tests.some((t) => t(rel, name)),
    relOf: (rel) => (base === '' ? rel : `${base}/${rel}`),
    endings: nameEndings(patterns),
  };
}

/** The last segment of a pattern that only names ending in a plain suffix can match: `*.ts`. */
const STAR_SUFFIX = /^\*([\w.~-]+)$/;

/**
 * The name endings every file a glob matches must have, for a provider that can leave the rest
 * out in storage; undefined unless each pattern ends in `*SUFFIX` (no negation, braces or escapes).
 */
export function nameEndings(patterns: readonly string[]): readonly string[] | undefined {
  const endings = new Set<string>();
  for (const p of patterns) {
    if (p.startsWith('!') || /[{}\\]/.test(p)) return undefined;
    const suffix = STAR_SUFFIX.exec(p.slice(p.lastIndexOf('/') + 1))?.[1];
    if (suffix === undefined) return undefined;
    endings.add(suffix);
  }
  return [...endings];
}

/** The directory the walk starts in; undefined when a base below `cwd` is missing or not a directory. */
async function startOf(fs: FileSystem, startPath: string, base: string, signal: AbortSignal | undefined): Promise<FsTarget | undefined> {
  try {
    const start = await fs.resolve(startPath, { ...(signal ? { signal } : {}) });
    const info = base === '' ? { type: 'directory' } : await fs.stat(start, { versioned: false, ...(signal ? { signal } : {}) });
    return info?.type === 'directory' ? start : undefined;
  } catch (err) {
    if (base !== '' && (isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY'))) return undefined;
    throw err;
  }
}

interface Collected {
  readonly found: GlobMatch[];
  readonly truncated: GlobResult['truncated'];
  readonly ignored: number;
}

/**
 * Whether ignore rules exclude a walked item, in walk order. Ignored directories are still
 * walked, so that the matches left out are counted, but no rule file below them is read.
 */
function ignoredBy(rules: IgnoreRulesWalk): (item: WalkItem) => Promise<boolean> {
  const ignoredDirs = new Set<string>();
  return async ({ path, entry }) => {
    const parent = posix.dirname(path);
    const isDir = entry.type === 'directory';
    if (ignoredDirs.has(parent)) {
      if (isDir) ignoredDirs.add(path);
      return true;
    }
    const inForce = rules.pending(parent) ? await rules.get(parent, entry.name, entry.target) : rules.known(parent);
    const ignored = inForce.length > 0 && decide(inForce, path, isDir) === true;
    if (isDir) {
      if (ignored) ignoredDirs.add(path);
      else rules.enter(path, inForce);
    }
    return ignored;
  };
}

/** The matches of one walk, up to `limit`, and how many ignore rules left out. */
async function collect(
  walker: Walker,
  plan: GlobPlan,
  onlyFiles: boolean,
  limit: number,
  isIgnored: (item: WalkItem) => Promise<boolean>,
): Promise<Collected> {
  const found: GlobMatch[] = [];
  let truncated: GlobResult['truncated'] = false;
  let ignored = 0;
  outer: for await (const items of walker.batches()) {
    for (const item of items) {
      const { path, rel: below, entry } = item;
      // Every item, so that the rules of each directory are known before its entries.
      const leftOut = await isIgnored(item);
      if (entry.type === 'other' || (onlyFiles && entry.type !== 'file')) continue;
      const rel = plan.relOf(below);
      if (!plan.matches(rel, entry.name) || (plan.ignores && plan.ignored(rel))) continue;
      if (leftOut) {
        ignored++;
        continue;
      }
      if (found.length >= limit) {
        truncated = 'limit';
        break outer;
      }
      found.push({
        path,
        target: entry.target,
        type: entry.type,
        ...(entry.size === undefined ? {} : { size: entry.size }),
        ...(entry.mtimeMs === undefined ? {} : { mtimeMs: entry.mtimeMs }),
      });
    }
  }
  if (truncated === false && walker.exceeded) truncated = 'entries';
  return { found, truncated, ignored };
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
