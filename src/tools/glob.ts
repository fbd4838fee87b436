import { canonicalPath } from '../seam/index.js';
import { DEFAULT_MAX_ENTRIES, VCS_DIRECTORIES, comparePaths, glob, relativeTo, type SkipCounts } from '../search/index.js';
import type { Tool } from '../harness/index.js';
import { globOutputSchema } from './outputs.js';
import { createGlobSchema, globDescription, searchToolLimits, type GlobArgs, type SearchToolsOptions } from './search-schemas.js';
import { appendNotes, displayPath, refuseVcsStart, skipNotes } from './search-notes.js';

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
  /** Matches left out because .gitignore (or `.git/info/exclude`) excludes them; 0 with `gitignore: false`. */
  readonly ignored: number;
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

export function renderGlob(value: GlobValue): string {
  if (value.total === 0) return appendNotes('No files found', [...ignoredNotes(value.ignored), ...skipNotes(value.skippedCounts, false)]);
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
  notes.push(...ignoredNotes(value.ignored), ...skipNotes(value.skippedCounts, false));
  return appendNotes(lines.join('\n'), notes);
}

/** Says that ignore rules left matches out, so the model knows to ask for them. */
function ignoredNotes(ignored: number): string[] {
  if (ignored === 0) return [];
  const files = ignored === 1 ? '1 more file matched but is' : `${ignored} more files matched but are`;
  return [`${files} excluded by .gitignore; set gitignore to false to include them.`];
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
        gitignore: args.gitignore ?? true,
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
        ignored: result.ignored,
        skippedCounts: result.skippedCounts,
      };
    },
  };
}
