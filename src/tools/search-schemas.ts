import { z } from 'zod';
import { FsError } from '../seam/index.js';
import { NOT_BLANK } from './schemas.js';

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
    gitignore: z
      .boolean()
      .nullish()
      .describe('Leave out files that .gitignore excludes (default true); false lists them too, e.g. to look inside node_modules.'),
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
    `when the filesystem reports it), then by path; at most ${limits.globMaxResults} are shown. Includes hidden files; ` +
    'respects .gitignore like rg --files and says how many ignored files matched (set gitignore to false to list them); ' +
    'version-control directories such as .git are skipped; lists files only, not directories. ' +
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
