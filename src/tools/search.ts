import { z } from 'zod';
import { FsError, canonicalPath } from '../seam/index.js';
import { DEFAULT_MAX_ENTRIES, VCS_DIRECTORIES, comparePaths, glob, grep, relativeTo, type SkipCounts } from '../search/index.js';
import { NOT_BLANK } from './schemas.js';
import { globOutputSchema, grepOutputSchema } from './outputs.js';
import { toolListing, type HarnessContext, type HarnessPluginObject, type Tool } from '../harness/index.js';
import { formatTools, type ToolDefinitionFor, type ToolFormat } from '../adapters/definitions.js';

export interface SearchToolsOptions {
  /** Paths glob shows inline (default 100). */
  readonly globMaxResults?: number;
  /** Matches glob collects before it stops walking; the order is exact below it (default 10,000). */
  readonly globMaxCollect?: number;
  /** Matches grep shows inline (default 250). */
  readonly grepMaxMatches?: number;
  /** UTF-8 bytes shown per matched line, cut on a character boundary (default 2000). */
  readonly grepMaxLineBytes?: number;
  /** Files larger than this are not searched by grep (default 32 MiB). */
  readonly grepMaxFileBytes?: number;
  /** How long grep's matcher may work on one chunk of a file before the call fails with FS_TIMEOUT (default 10,000 ms). */
  readonly grepMatchTimeoutMs?: number;
}

export interface SearchToolLimits {
  readonly globMaxResults: number;
  readonly globMaxCollect: number;
  readonly grepMaxMatches: number;
  readonly grepMaxLineBytes: number;
  readonly grepMaxFileBytes: number;
  readonly grepMatchTimeoutMs: number;
}

export const DEFAULT_SEARCH_LIMITS: SearchToolLimits = Object.freeze({
  globMaxResults: 100,
  globMaxCollect: 10_000,
  grepMaxMatches: 250,
  grepMaxLineBytes: 2000,
  grepMaxFileBytes: 32 * 1024 * 1024,
  grepMatchTimeoutMs: 10_000,
});

export function searchToolLimits(options: SearchToolsOptions = {}): SearchToolLimits {
  const pick = (name: keyof SearchToolLimits, min: number) => {
    const value = options[name] ?? DEFAULT_SEARCH_LIMITS[name];
    if (!Number.isSafeInteger(value) || value < min) {
      throw new FsError('FS_INVALID_ARGUMENT', `${name} must be an integer of at least ${min}, got ${String(value)}`);
    }
    return value;
  };
  const limits = {
    globMaxResults: pick('globMaxResults', 1),
    globMaxCollect: pick('globMaxCollect', 1),
    grepMaxMatches: pick('grepMaxMatches', 1),
    grepMaxLineBytes: pick('grepMaxLineBytes', 4),
    grepMaxFileBytes: pick('grepMaxFileBytes', 1),
    grepMatchTimeoutMs: pick('grepMatchTimeoutMs', 1),
  };
  if (limits.globMaxCollect < limits.globMaxResults) {
    throw new FsError('FS_INVALID_ARGUMENT', 'globMaxCollect must be at least globMaxResults');
  }
  return limits;
}

// ---------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------

const SEARCH_PATH = (what: string) =>
  z
    .string()
    .min(1, { message: 'must be a non-empty path', abort: true })
    .regex(NOT_BLANK, 'must not be blank')
    .nullish()
    .describe(`${what}: absolute, or relative to the working directory. Defaults to the working directory.`);

export function createGlobSchema() {
  return z.strictObject({
    pattern: z
      .string()
      .min(1, { message: 'must be a non-empty glob', abort: true })
      .regex(NOT_BLANK, 'must not be blank')
      .describe(
        'Glob pattern matched against file paths relative to path, e.g. "**/*.ts" or "src/**/test_*.py". ' +
          'A pattern without "/" matches file names at any depth ("*.ts" finds every .ts file). ' +
          'Supports *, **, ?, [abc] and {a,b}.',
      ),
    path: SEARCH_PATH('Directory to search in'),
  });
}

/** One positive glob: `!` negation and comma lists are refused with the form to use instead. */
export function includeProblem(include: string): string | undefined {
  if (include.startsWith('!')) return 'must be one positive glob; negation with "!" is not supported';
  let depth = 0;
  for (let i = 0; i < include.length; i++) {
    const ch = include[i];
    if (ch === '\\') i++;
    else if (ch === '{') depth++;
    else if (ch === '}') depth = Math.max(0, depth - 1);
    else if (ch === ',' && depth === 0) return 'must be one glob, not a comma-separated list (use {a,b} alternation instead, e.g. "*.{ts,tsx}")';
  }
  return undefined;
}

export function createGrepSchema() {
  return z.strictObject({
    pattern: z
      .string()
      .min(1, 'must be a non-empty regular expression')
      .describe(
        'Regular expression (JavaScript syntax) searched for in each line, e.g. "function\\s+\\w+" or "TODO". ' +
          'Case-sensitive; start it with (?i) to ignore case. Escape regex characters to search literally ("\\.", "\\(").',
      ),
    path: SEARCH_PATH('File or directory to search'),
    include: z
      .string()
      .min(1, { message: 'must be a non-empty glob', abort: true })
      .regex(NOT_BLANK, 'must not be blank')
      .superRefine((value, ctx) => {
        const problem = includeProblem(value);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      })
      .nullish()
      .describe(
        'Only search files matching this one glob, e.g. "*.ts" or "*.{ts,tsx}"; a glob without "/" matches ' +
          'file names at any depth, one with "/" matches paths relative to path.',
      ),
  });
}

export type GlobArgs = z.output<ReturnType<typeof createGlobSchema>>;
export type GrepArgs = z.output<ReturnType<typeof createGrepSchema>>;

export const globSchema = createGlobSchema();
export const grepSchema = createGrepSchema();

export function globDescription(limits: SearchToolLimits = DEFAULT_SEARCH_LIMITS): string {
  return (
    'Find files by name with a glob pattern. Returns matching file paths, newest first (most recently modified, ' +
    `when the filesystem reports it), then by path; at most ${limits.globMaxResults} are shown. Includes hidden and .gitignore'd files ` +
    '(version-control directories such as .git are skipped); lists files only, not directories. ' +
    'Use grep to search inside files.'
  );
}

export function grepDescription(limits: SearchToolLimits = DEFAULT_SEARCH_LIMITS): string {
  return (
    'Search file contents with a regular expression. Returns matching lines as "Line N: text", grouped by file, in ' +
    `path order then line order; at most ${limits.grepMaxMatches} matches are shown and each line is cut at ` +
    `${limits.grepMaxLineBytes} bytes. Respects .gitignore and skips hidden files, version-control directories and ` +
    'binary files. Narrow a broad search with path or include.'
  );
}

// ---------------------------------------------------------------------------------------------
// glob
// ---------------------------------------------------------------------------------------------

export interface GlobValue {
  /** The directory searched (absolute). */
  readonly dir: string;
  /** The working directory paths are shown relative to. */
  readonly cwd: string;
  /** The shown page: newest first, then by path. */
  readonly paths: readonly { readonly path: string; readonly mtimeMs?: number }[];
  /** Matches found; a lower bound when `stopped` is set. */
  readonly total: number;
  /** Why the search stopped before finding every match. */
  readonly stopped?: { readonly reason: 'limit' | 'entries'; readonly at: number };
  /** False when the filesystem reports no modification times: the order is by path only. */
  readonly byMtime: boolean;
  /**
   * Set when more matched than are shown and they lie in several top-level directories: the page
   * is a sample taken in turn from each (newest first within each), and these are the matches per
   * directory (`.` for files directly in `dir`), most first.
   */
  readonly spread?: readonly { readonly dir: string; readonly count: number }[];
  readonly skippedCounts: SkipCounts;
}

/**
 * The page of a glob: the newest `max`, or, when more matched and they lie in several top-level
 * directories, a sample taken from each in turn so that one busy directory cannot fill the page.
 */
function pageOf(all: readonly { path: string; mtimeMs?: number }[], dir: string, max: number): Pick<GlobValue, 'paths' | 'spread'> {
  if (all.length <= max) return { paths: all.slice() };
  const groups = new Map<string, { path: string; mtimeMs?: number }[]>();
  for (const m of all) {
    const rel = relativeTo(dir, m.path) ?? m.path;
    const slash = rel.indexOf('/');
    const top = slash === -1 ? '.' : rel.slice(0, slash);
    let group = groups.get(top);
    if (group === undefined) groups.set(top, (group = []));
    group.push(m);
  }
  if (groups.size < 2) return { paths: all.slice(0, max) };
  const queues = [...groups.values()];
  const paths: { path: string; mtimeMs?: number }[] = [];
  for (let i = 0; paths.length < max; i++) {
    let took = false;
    for (const q of queues) {
      if (i < q.length && paths.length < max) {
        paths.push(q[i]!);
        took = true;
      }
    }
    if (!took) break;
  }
  paths.sort(compareNewestFirst);
  const spread = [...groups].map(([d, g]) => ({ dir: d, count: g.length })).sort((a, b) => b.count - a.count || comparePaths(a.dir, b.dir));
  return { paths, spread };
}

/** Newest first (unknown times last), then tree order. */
export function compareNewestFirst(a: { path: string; mtimeMs?: number }, b: { path: string; mtimeMs?: number }): number {
  const ta = a.mtimeMs ?? Number.NEGATIVE_INFINITY;
  const tb = b.mtimeMs ?? Number.NEGATIVE_INFINITY;
  if (ta !== tb) return tb > ta ? 1 : -1;
  return comparePaths(a.path, b.path);
}

/** `path` relative to `cwd` when inside it, else absolute. */
export function displayPath(path: string, cwd: string): string {
  const rel = relativeTo(cwd, path);
  return rel === undefined ? path : rel;
}

export function renderGlob(value: GlobValue): string {
  if (value.total === 0) return appendNotes('No files found', skipNotes(value.skippedCounts, false));
  const lines = value.paths.map((p) => displayPath(p.path, value.cwd));
  const notes: string[] = [];
  const shown = value.paths.length;
  if (value.stopped) {
    const why =
      value.stopped.reason === 'limit'
        ? `the search stopped after ${value.stopped.at} matches`
        : `the search stopped after listing ${value.stopped.at} entries`;
    notes.push(
      `Showing ${shown} of more than ${value.total} paths: ${why}, so this page is not the newest of all matches. ` +
        'Narrow pattern (a subdirectory or an extension) or path to see the rest.',
    );
  } else if (shown < value.total && value.spread !== undefined) {
    const listed = value.spread.slice(0, 10).map((s) => `${s.dir} (${s.count})`).join(', ');
    const more = value.spread.length > 10 ? `, and ${value.spread.length - 10} more` : '';
    const example = value.spread.find((s) => s.dir !== '.')?.dir;
    notes.push(
      `Showing ${shown} of ${value.total} paths: a sample from each of the ${value.spread.length} top-level directories, ` +
        `${value.byMtime ? 'newest first' : 'in path order'} within each. Matches per directory: ${listed}${more}. ` +
        `Narrow pattern or path to one of them${example === undefined ? '' : ` (e.g. path "${example}")`} to see the rest.`,
    );
  } else if (shown < value.total) {
    notes.push(
      `Showing ${shown} of ${value.total} paths, ${value.byMtime ? 'newest first' : 'in path order'}. ` +
        'Narrow pattern (a subdirectory or an extension) or path to see the rest.',
    );
  }
  notes.push(...skipNotes(value.skippedCounts, false));
  return appendNotes(lines.join('\n'), notes);
}

export function createGlobTool(options: SearchToolsOptions = {}): Tool<GlobArgs, GlobValue> {
  const limits = searchToolLimits(options);
  return {
    name: 'glob',
    title: 'Find files',
    hints: { readOnlyHint: true, idempotentHint: true },
    outputSchema: globOutputSchema,
    description: globDescription(limits),
    schema: createGlobSchema(),
    render: renderGlob,
    async execute(args, call) {
      const { signal } = call;
      const dir = args.path == null ? call.cwd : canonicalPath(args.path, call.cwd);
      refuseVcsStart('glob', args.path, dir, call.fs.root);
      const result = await glob(call.fs, args.pattern, {
        cwd: dir,
        matchBase: true,
        dot: true,
        ignore: VCS_DIRECTORIES.flatMap((d) => [`**/${d}`, `**/${d}/**`]),
        limit: limits.globMaxCollect,
        ...(signal ? { signal } : {}),
      });
      const all = result.matches.map((m) => ({ path: m.path, ...(m.mtimeMs === undefined ? {} : { mtimeMs: m.mtimeMs }) }));
      all.sort(compareNewestFirst);
      return {
        dir: result.cwd,
        cwd: call.cwd,
        ...pageOf(all, dir, limits.globMaxResults),
        total: all.length,
        ...(result.truncated === false
          ? {}
          : { stopped: { reason: result.truncated, at: result.truncated === 'limit' ? limits.globMaxCollect : DEFAULT_MAX_ENTRIES } }),
        byMtime: all.some((m) => m.mtimeMs !== undefined),
        skippedCounts: result.skippedCounts,
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// grep
// ---------------------------------------------------------------------------------------------

export interface GrepLine {
  readonly path: string;
  readonly line: number;
  readonly text: string;
  readonly lineTruncated: boolean;
}

export interface GrepValue {
  /** The file or directory searched (absolute). */
  readonly path: string;
  readonly cwd: string;
  /** By path, then line. */
  readonly matches: readonly GrepLine[];
  /** `matches`: more matches exist beyond those shown; `files`: the file budget ran out. */
  readonly truncated: false | 'matches' | 'files';
  readonly filesSearched: number;
  readonly skippedCounts: SkipCounts;
  readonly maxFileBytes: number;
}

export function renderGrep(value: GrepValue): string {
  const notes: string[] = [];
  if (value.truncated === 'matches') {
    notes.push(
      `Showing the first ${value.matches.length} matches in path order; more exist. ` +
        'Narrow pattern, path or include to see the rest.',
    );
  } else if (value.truncated === 'files') {
    notes.push(`The search stopped after ${value.filesSearched} files. Narrow path or include to search the rest.`);
  }
  notes.push(...skipNotes(value.skippedCounts, true, value.maxFileBytes));
  if (value.matches.length === 0) return appendNotes('No matches found', notes);

  const files = new Set(value.matches.map((m) => m.path)).size;
  const n = value.matches.length;
  const more = value.truncated === 'matches' ? ' (more exist)' : '';
  const head = `Found ${n} match${n === 1 ? '' : 'es'}${more} in ${files} file${files === 1 ? '' : 's'}`;
  const blocks: string[] = [];
  let current: string | undefined;
  let block: string[] = [];
  for (const m of value.matches) {
    if (m.path !== current) {
      if (block.length > 0) blocks.push(block.join('\n'));
      current = m.path;
      block = [displayPath(m.path, value.cwd)];
    }
    block.push(`Line ${m.line}: ${m.text}${m.lineTruncated ? ' (line truncated)' : ''}`);
  }
  if (block.length > 0) blocks.push(block.join('\n'));
  return appendNotes(`${head}\n\n${blocks.join('\n\n')}`, notes);
}

export function createGrepTool(options: SearchToolsOptions = {}): Tool<GrepArgs, GrepValue> {
  const limits = searchToolLimits(options);
  return {
    name: 'grep',
    title: 'Search file contents',
    hints: { readOnlyHint: true, idempotentHint: true },
    outputSchema: grepOutputSchema,
    description: grepDescription(limits),
    schema: createGrepSchema(),
    render: renderGrep,
    async execute(args, call) {
      const { signal } = call;
      if (args.path != null) refuseVcsStart('grep', args.path, canonicalPath(args.path, call.cwd), call.fs.root);
      const result = await grep(call.fs, args.pattern, {
        cwd: call.cwd,
        ...(args.path == null ? {} : { path: args.path }),
        ...(args.include == null ? {} : { include: args.include }),
        maxMatches: limits.grepMaxMatches,
        maxLineBytes: limits.grepMaxLineBytes,
        maxFileBytes: limits.grepMaxFileBytes,
        matchTimeoutMs: limits.grepMatchTimeoutMs,
        ...(signal ? { signal } : {}),
      });
      return {
        path: result.path,
        cwd: call.cwd,
        matches: result.matches.map((m) => ({ path: m.path, line: m.line, text: m.text, lineTruncated: m.lineTruncated })),
        truncated: result.truncated,
        filesSearched: result.filesSearched,
        skippedCounts: result.skippedCounts,
        maxFileBytes: limits.grepMaxFileBytes,
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// shared rendering
// ---------------------------------------------------------------------------------------------

function skipNotes(counts: SkipCounts, grep: boolean, maxFileBytes?: number): string[] {
  const parts: string[] = [];
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  if (grep && counts.binary > 0) parts.push(`${plural(counts.binary, 'binary file', 'binary files')} skipped`);
  if (grep && counts.tooLarge > 0) {
    const limit = maxFileBytes === undefined ? '' : ` over ${formatSize(maxFileBytes)}`;
    parts.push(`${plural(counts.tooLarge, 'file', 'files')}${limit} skipped`);
  }
  if (counts.unreadable > 0) parts.push(`${plural(counts.unreadable, 'entry', 'entries')} could not be read`);
  if (counts.loops > 0) parts.push(`${plural(counts.loops, 'symlinked directory', 'symlinked directories')} skipped as a loop`);
  return parts.length === 0 ? [] : [`${capitalise(parts.join('; '))}.`];
}

function formatSize(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function appendNotes(text: string, notes: readonly string[]): string {
  return notes.length === 0 ? text : `${text}\n\n${notes.map((n) => `(${n})`).join('\n')}`;
}

// ---------------------------------------------------------------------------------------------
// Plugin
// ---------------------------------------------------------------------------------------------

export interface SearchToolSuite {
  readonly glob: Tool<GlobArgs, GlobValue>;
  readonly grep: Tool<GrepArgs, GrepValue>;
}

export function createSearchTools(options: SearchToolsOptions = {}): SearchToolSuite {
  return { glob: createGlobTool(options), grep: createGrepTool(options) };
}

/** The walks skip version-control directories they meet; one named as the start is refused the same way. */
function refuseVcsStart(tool: string, given: string | null | undefined, path: string, root: string | undefined): void {
  const below = relativeTo(root ?? '/', path) ?? path;
  const vcs = below.split('/').find((segment) => VCS_DIRECTORIES.includes(segment));
  if (vcs !== undefined) {
    throw new FsError('FS_INVALID_ARGUMENT', `path "${given}" is inside a version-control directory (${vcs}), which ${tool} skips; search a directory outside it`);
  }
}

/**
 * The plugin that registers `glob` and `grep` on a harness. Separate from `fsTools()` so a
 * harness can offer search without the mutating tools, or the reverse.
 */
export function searchTools(options: SearchToolsOptions = {}): HarnessPluginObject {
  const suite = createSearchTools(options);
  return {
    name: 'search-tools',
    apply(ctx: HarnessContext) {
      const tools: Tool[] = [suite.glob, suite.grep];
      const clash = tools.find((t) => ctx.tools.has(t.name));
      if (clash) ctx.tools.register(clash); // the registry's duplicate-name error, before anything is added
      for (const tool of tools) ctx.tools.register(tool);
    },
  };
}

/** Definitions of `glob` and `grep` alone (`toolDefinitions()` includes them by default). */
export function searchToolDefinitions<F extends ToolFormat = 'anthropic'>(options: SearchToolsOptions & { readonly format?: F } = {}): ToolDefinitionFor<F>[] {
  const suite = createSearchTools(options);
  // Neither is declared natively, so every entry is a plain definition.
  return formatTools([suite.glob, suite.grep].map(toolListing), options.format ?? ('anthropic' as F)) as ToolDefinitionFor<F>[];
}
