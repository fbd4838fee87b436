import { posix } from 'node:path';
import { FsError, type FileSystem, type FsInfo, type FsTarget } from '../seam/index.js';
import { decide } from './dialect.js';
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
  for await (const items of walker.batches()) {
    const files: FileItem[] = [];
    for (const { path, rel, entry } of items) {
      const parent = posix.dirname(path);
      const rules = rulesFor.pending(parent) ? await rulesFor.get(parent, entry.name, entry.target) : rulesFor.known(parent);
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
