import { posix } from 'node:path';
import { FsError, type FileSystem, type FsInfo, type FsTarget } from '../seam/index.js';
import { decide, type IgnoreRule } from './dialect.js';
import { ignoreRulesWalk } from './ignore-files.js';
import { VCS_DIRECTORIES, type SearchSkip } from './shared.js';
import { walkFrom } from './walker.js';

export interface FileItem {
  readonly path: string;
  readonly target: FsTarget;
  readonly size?: number;
}

/** Where grep looks and what it lets through. */
export interface FileSource {
  readonly fs: FileSystem;
  readonly what: string;
  readonly rootPath: string;
  readonly rootTarget: FsTarget;
  readonly rootInfo: FsInfo;
  /** The user's abort and the search's own early stop, in one. */
  readonly signal: AbortSignal;
  readonly useGitignore: boolean;
  readonly hidden: boolean;
  readonly include: ((relative: string, name: string) => boolean) | undefined;
  /** Counts a skip, and keeps the first few. */
  record(entry: SearchSkip): void;
}

/** Whether `path` names an entry directly in `dir` (both absolute, in the same form). */
function isChildOf(path: string, dir: string): boolean {
  const at = dir === '/' ? 1 : dir.length + 1;
  return path.length > at && path.startsWith(dir) && (dir === '/' || path.charCodeAt(dir.length) === 47) && path.indexOf('/', at) === -1;
}

/**
 * The files grep reads: the one named, or those under the directory that ignore rules, hidden
 * names and `include` let through. A run at a time (mostly one directory's files): a promise per
 * run, not per file.
 */
export async function* grepFiles(ctx: FileSource): AsyncGenerator<FileItem[]> {
  const { fs, rootPath, rootTarget, rootInfo, signal } = ctx;
  if (rootInfo.type === 'file') {
    yield [{ path: rootPath, target: rootTarget, ...(rootInfo.size === undefined ? {} : { size: rootInfo.size }) }];
    return;
  }
  if (rootInfo.type !== 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${ctx.what}: not a file or directory`);
  const rulesFor = await ignoreRulesWalk(fs, rootPath, ctx.useGitignore, signal);
  const pruned = new Set<string>();
  const walker = walkFrom(fs, rootTarget, rootPath, {
    signal,
    prune: (item) => pruned.has(item.path),
    // A file's size is known once it is opened.
    wantsStats: () => false,
    onSkip: (skip) => ctx.record({ path: skip.path, reason: skip.reason, ...(skip.error ? { code: skip.error.code, message: skip.error.message } : {}) }),
  });
  // The parent of the last item and its rules: a run is mostly one directory's entries.
  let lastParent = '';
  let lastRules: IgnoreRule[] = [];
  for await (const items of walker.batches()) {
    const files: FileItem[] = [];
    for (const { path, rel, entry } of items) {
      let rules: IgnoreRule[];
      if (lastParent !== '' && isChildOf(path, lastParent)) rules = lastRules;
      else {
        const parent = posix.dirname(path);
        rules = rulesFor.pending(parent) ? await rulesFor.get(parent, entry.name, entry.target) : rulesFor.known(parent);
        // Settled rules only: a directory's own ignore file may still be read at a later entry.
        lastParent = rulesFor.pending(parent) ? '' : parent;
        lastRules = rules;
      }
      if (entry.type === 'other') continue;
      const isDir = entry.type === 'directory';
      if ((isDir && VCS_DIRECTORIES.includes(entry.name)) || (!ctx.hidden && entry.name.startsWith('.')) || (rules.length > 0 && decide(rules, path, isDir) === true)) {
        if (isDir) pruned.add(path);
        continue;
      }
      if (isDir) {
        rulesFor.enter(path, rules);
        continue;
      }
      if (ctx.include !== undefined && !ctx.include(rel, entry.name)) continue;
      files.push({ path, target: entry.target, ...(entry.size === undefined ? {} : { size: entry.size }) });
    }
    if (files.length > 0) yield files;
  }
}
