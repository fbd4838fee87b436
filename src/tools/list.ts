import { posix } from 'node:path';
import { z } from 'zod';
import { FsError, canonicalPath, compareNames, isRealSubdirectory, type FsEntryType, type FsTarget } from '../seam/index.js';
import { VCS_DIRECTORIES, globToRegExp, isIgnored, type IgnoreRule } from '../search/index.js';
import { gitignoreRulesAbove, readIgnoreFile } from '../search/search.js';
import type { Tool } from '../harness/index.js';
import { shownPath } from '../harness/tools.js';
import { DEFAULT_TOOL_LIMITS, NOT_BLANK } from './schemas.js';
import { withRemedy } from './errors.js';
import { listOutputSchema } from './outputs.js';

export interface ListToolLimits {
  /** Levels shown below the listed directory (default 3); deeper directories are named, not expanded. */
  readonly listMaxDepth: number;
  /** Entries shown (default 500). */
  readonly listMaxEntries: number;
  /** Entries the walk may visit, ignored ones included, before it stops (default 100,000). */
  readonly listMaxScan: number;
}

export const DEFAULT_LIST_LIMITS: ListToolLimits = DEFAULT_TOOL_LIMITS;

export function createListSchema() {
  return z.strictObject({
    path: z
      .string()
      .min(1, { message: 'must be a non-empty path', abort: true })
      .regex(NOT_BLANK, 'must not be blank')
      .nullish()
      .describe('Directory to list: absolute, or relative to the working directory. Defaults to the working directory.'),
    ignore: z
      .array(
        z
          .string()
          .min(1, { message: 'must be a non-empty glob', abort: true })
          .regex(NOT_BLANK, 'must not be blank')
          .refine((g) => !g.startsWith('!'), 'must be a positive glob; negation with "!" is not supported'),
      )
      .nullish()
      .describe(
        'Extra glob patterns of entries to leave out, e.g. ["*.log", "fixtures"]. A pattern without "/" matches names at any ' +
          'depth; one with "/" matches paths relative to path. A matching directory is left out with everything in it.',
      ),
  });
}

export type ListArgs = z.output<ReturnType<typeof createListSchema>>;
export const listSchema = createListSchema();

export function listDescription(limits: ListToolLimits = DEFAULT_LIST_LIMITS): string {
  return (
    `List a directory as a tree, ${limits.listMaxDepth} levels deep and at most ${limits.listMaxEntries} entries: directories ` +
    'first (marked with a trailing "/"), then files with their sizes, each group by name. Respects .gitignore and skips ' +
    'version-control directories such as .git; hidden files are shown. A footer says what was left out and how to see it ' +
    '(list a subdirectory with path, or leave entries out with ignore). Use glob to find files by name anywhere.'
  );
}

export interface ListEntry {
  /** Relative to the listed directory, `/`-separated. */
  readonly path: string;
  /** `other`: a special file, or a link that leads nowhere (dangling or looping). */
  readonly type: FsEntryType;
  /** 1 for the listed directory's own entries. */
  readonly depth: number;
  /** Files: bytes. */
  readonly size?: number;
  /** A symbolic link to a directory: shown, never followed. */
  readonly link?: boolean;
  /** A directory whose contents are not shown: too deep, or over the entry limit; with its entry count. */
  readonly notExpanded?: { readonly reason: 'depth' | 'limit'; readonly entries: number };
}

export interface ListValue {
  /** The directory listed (absolute). */
  readonly path: string;
  /** In display order: a directory's entries follow it, directories first, then by name. */
  readonly entries: readonly ListEntry[];
  /** Entries found within the depth (ignored ones not counted). */
  readonly total: number;
  /** Of `total`, those not shown (over the entry limit). */
  readonly omitted: number;
  /** Of `omitted`, entries of the listed directory itself (the rest are inside directories not expanded). */
  readonly rootOmitted: number;
  /** Entries left out by .gitignore, version-control exclusions or `ignore`. */
  readonly ignored: number;
  readonly maxDepth: number;
  /** The walk stopped after visiting this many entries: the listing is incomplete. */
  readonly stopped?: { readonly scanned: number };
}

interface Node {
  readonly path: string;
  readonly name: string;
  readonly type: FsEntryType;
  readonly depth: number;
  readonly size?: number;
  readonly link?: boolean;
  readonly children: Node[];
  /** Direct children counted but not collected (the directory is at the depth limit). */
  uncollected: number;
}

interface OpenDir {
  readonly node: Node;
  readonly abs: string;
  readonly target: FsTarget;
  readonly rules: readonly IgnoreRule[];
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const MAX_NAMED_DIRECTORIES = 10;

export function renderList(value: ListValue): string {
  const head = value.path.endsWith('/') ? value.path : `${value.path}/`;
  const lines = [shownPath(head)];
  for (const e of value.entries) {
    const name = e.path.slice(e.path.lastIndexOf('/') + 1);
    const indent = '  '.repeat(e.depth);
    let note = '';
    if (e.type === 'file') note = e.size === undefined ? '' : ` (${sizeText(e.size)})`;
    else if (e.link) note = ' (symlink, not followed)';
    else if (e.type === 'other') note = ' (other: special file or broken link)';
    else if (e.notExpanded) note = ` (${plural(e.notExpanded.entries, 'entry', 'entries')}, not expanded)`;
    lines.push(`${indent}${name}${e.type === 'directory' ? '/' : ''}${note}`);
  }
  if (value.entries.length === 0) lines.push('  (empty)');

  const notes: string[] = [];
  const byLimit = value.entries.filter((e) => e.notExpanded?.reason === 'limit');
  if (value.omitted > 0) {
    const parts = byLimit.slice(0, MAX_NAMED_DIRECTORIES).map((e) => `${e.path}/ (${plural(e.notExpanded!.entries, 'entry', 'entries')})`);
    if (byLimit.length > MAX_NAMED_DIRECTORIES) parts.push(`${plural(byLimit.length - MAX_NAMED_DIRECTORIES, 'more directory', 'more directories')}`);
    if (value.rootOmitted > 0) parts.push(`${plural(value.rootOmitted, 'further entry', 'further entries')} of ${shownPath(head)}`);
    notes.push(
      `Showing ${value.entries.length} of ${value.total} entries. Not shown: ${parts.join(', ')}. ` +
        'List a subdirectory with path, or leave entries out with ignore, to see the rest.',
    );
  }
  const byDepth = value.entries.filter((e) => e.notExpanded?.reason === 'depth').length;
  if (byDepth > 0) {
    notes.push(`${plural(byDepth, 'directory', 'directories')} below depth ${value.maxDepth} not expanded; list one with path to see inside.`);
  }
  if (value.ignored > 0) notes.push(`${plural(value.ignored, 'entry', 'entries')} left out by .gitignore, version-control exclusions or ignore.`);
  if (value.stopped) {
    notes.push(`The listing stopped after visiting ${value.stopped.scanned} entries and may be incomplete; list a subdirectory with path.`);
  }
  return notes.length === 0 ? lines.join('\n') : `${lines.join('\n')}\n\n${notes.map((n) => `(${n})`).join('\n')}`;
}

function ignoreMatcher(patterns: readonly string[]): (relative: string, name: string) => boolean {
  const compiled = patterns.map((p) => {
    let re: RegExp;
    try {
      re = globToRegExp(p.replace(/\/+$/, ''));
    } catch (err) {
      throw new FsError('FS_INVALID_ARGUMENT', `invalid ignore glob ${JSON.stringify(p)}: ${err instanceof Error ? err.message : String(err)}`);
    }
    return { re, byPath: p.replace(/\/+$/, '').includes('/') };
  });
  return (relative, name) => compiled.some(({ re, byPath }) => re.test(byPath ? relative : name));
}

export function createListTool(limits: ListToolLimits = DEFAULT_LIST_LIMITS): Tool<ListArgs, ListValue> {
  return {
    name: 'list',
    title: 'List directory',
    hints: { readOnlyHint: true, idempotentHint: true },
    outputSchema: listOutputSchema,
    description: listDescription(limits),
    schema: createListSchema(),
    render: renderList,
    async execute(args, call) {
      const shown = args.path ?? call.cwd;
      try {
        const { signal } = call;
        const op = signal ? { signal } : {};
        const dir = args.path == null ? call.cwd : canonicalPath(args.path, call.cwd);
        const userIgnored = ignoreMatcher(args.ignore ?? []);
        const target = await call.fs.resolve(dir, op);
        const info = await call.fs.stat(target, { ...op, versioned: false });
        if (info === undefined) throw new FsError('FS_NOT_FOUND', `cannot list "${target.displayPath}": not found`);
        if (info.type !== 'directory') {
          throw new FsError('FS_NOT_DIRECTORY', `cannot list "${target.displayPath}": not a directory${info.type === 'file' ? ' (use read for a file)' : ''}`);
        }

        const root: Node = { path: '', name: '', type: 'directory', depth: 0, children: [], uncollected: 0 };
        const rootRules = [...(await gitignoreRulesAbove(call.fs, dir, op)), ...(await readIgnoreFile(call.fs, dir, op))];
        // Directories whose entries are being collected (or counted, at the depth limit), by relative path.
        const open = new Map<string, OpenDir>([['', { node: root, abs: dir, target, rules: rootRules }]]);
        let ignored = 0;
        let scanned = 0;
        let stopped = false;

        // walk visits ignored subtrees too (the contract has no pruning); their entries are dropped as they come.
        for await (const entry of call.fs.walk(target, op)) {
          if (++scanned > limits.listMaxScan) {
            stopped = true;
            break;
          }
          const slash = entry.path.lastIndexOf('/');
          const parent = open.get(slash === -1 ? '' : entry.path.slice(0, slash));
          if (parent === undefined) continue; // inside an ignored, linked or too-deep directory
          const abs = dir === '/' ? `/${entry.path}` : `${dir}/${entry.path}`;
          const isDir = entry.type === 'directory';
          if (
            (isDir && VCS_DIRECTORIES.includes(entry.name)) ||
            userIgnored(entry.path, entry.name) ||
            (parent.rules.length > 0 && isIgnored(parent.rules, abs, isDir))
          ) {
            ignored++;
            continue;
          }
          if (parent.node.depth >= limits.listMaxDepth) {
            parent.node.uncollected++;
            continue;
          }
          const link = isDir && !isRealSubdirectory(parent.target, entry, (p, name) => call.fs.childKey(p, name));
          const node: Node = {
            path: entry.path,
            name: entry.name,
            type: entry.type,
            depth: parent.node.depth + 1,
            ...(entry.type === 'file' && entry.size !== undefined ? { size: entry.size } : {}),
            ...(link ? { link: true } : {}),
            children: [],
            uncollected: 0,
          };
          parent.node.children.push(node);
          if (isDir && !link) {
            // A directory at the depth limit is only counted, under its parent's rules.
            const own = node.depth < limits.listMaxDepth ? await readIgnoreFile(call.fs, abs, op) : [];
            open.set(entry.path, { node, abs, target: entry.target, rules: own.length > 0 ? [...parent.rules, ...own] : parent.rules });
          }
        }

        return select(dir, root, limits, ignored, stopped ? scanned - 1 : undefined);
      } catch (err) {
        throw withRemedy(err, `cannot list "${shown}"`);
      }
    },
  };
}

/** Directories first, then everything else, each by name in code-point order. */
function order(a: Node, b: Node): number {
  const da = a.type === 'directory' ? 0 : 1;
  const db = b.type === 'directory' ? 0 : 1;
  return da - db || compareNames(a.name, b.name);
}

function subtreeSize(node: Node): number {
  let n = node.children.length;
  for (const c of node.children) n += subtreeSize(c);
  return n;
}

/**
 * Chooses what to show within the entry limit, breadth first: a directory is expanded only if
 * all its entries fit (the listed directory's own entries are shown as far as they go), so the
 * tree is complete to some depth and the rest is named in the footer.
 */
function select(path: string, root: Node, limits: ListToolLimits, ignored: number, scanned: number | undefined): ListValue {
  const total = subtreeSize(root);
  let budget = limits.listMaxEntries;
  let rootOmitted = 0;
  const expanded = new Map<Node, Node[]>();
  const queue: Node[] = [root];
  while (queue.length > 0) {
    const dir = queue.shift()!;
    const children = [...dir.children].sort(order);
    if (children.length === 0) continue;
    if (children.length > budget && dir !== root) continue;
    const taken = children.slice(0, budget);
    if (dir === root) rootOmitted = children.length - taken.length;
    budget -= taken.length;
    expanded.set(dir, taken);
    for (const c of taken) if (c.type === 'directory') queue.push(c);
  }

  const entries: ListEntry[] = [];
  const emit = (dir: Node) => {
    for (const c of expanded.get(dir) ?? []) {
      const base = {
        path: c.path,
        type: c.type,
        depth: c.depth,
        ...(c.size === undefined ? {} : { size: c.size }),
        ...(c.link ? { link: true } : {}),
      };
      if (c.type === 'directory' && !c.link && !expanded.has(c) && (c.children.length > 0 || c.uncollected > 0)) {
        const reason = c.uncollected > 0 || c.depth >= limits.listMaxDepth ? 'depth' : 'limit';
        entries.push({ ...base, notExpanded: { reason, entries: c.children.length + c.uncollected } });
      } else entries.push(base);
      if (c.type === 'directory') emit(c);
    }
  };
  emit(root);
  return {
    path,
    entries,
    total,
    omitted: total - entries.length,
    rootOmitted,
    ignored,
    maxDepth: limits.listMaxDepth,
    ...(scanned === undefined ? {} : { stopped: { scanned } }),
  };
}
