import { canonicalPath } from '../seam/index.js';
import { grep, type SkipCounts } from '../search/index.js';
import type { Tool } from '../harness/index.js';
import { grepOutputSchema } from './outputs.js';
import { createGrepSchema, grepDescription, searchToolLimits, type GrepArgs, type SearchToolsOptions } from './search-schemas.js';
import { appendNotes, displayPath, refuseVcsStart, skipNotes } from './search-notes.js';

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
