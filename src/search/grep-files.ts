import { posix } from 'node:path';
import { FsError, type FileSystem, type FsInfo, type FsTarget } from '../seam/index.js';
import { compareNames } from '../seam/resolve.js';
import { decide, type IgnoreRule } from './dialect.js';
import { gitignoreRulesAbove, readIgnoreFile } from './ignore-files.js';
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
  const rulesFor = await ignoreRules(ctx);
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

/**
 * The rules in force in each directory entered (outer files first). A directory's own
 * `.gitignore` sorts among its first entries, so it is read when the walk reaches the first
 * entry at or past that name; an entry sorting before it (`-x`, `#y`) asks for it directly.
 */
async function ignoreRules(ctx: FileSource): Promise<{
  /** Whether `get` may still have to read the directory's own ignore file. */
  pending(dir: string): boolean;
  /** The rules in force in `dir` once nothing is pending there. */
  known(dir: string): IgnoreRule[];
  get(dir: string, name: string, target: FsTarget): Promise<IgnoreRule[]>;
  enter(dir: string, rules: IgnoreRule[]): void;
}> {
  const { fs, signal, useGitignore } = ctx;
  /** The rules of an ignore file (`.gitignore` in `dir` unless named), anchored at `dir`. */
  const readRules = (dir: string, target?: FsTarget): Promise<IgnoreRule[]> => readIgnoreFile(fs, dir, { signal, ...(target ? { target } : {}) });
  const above = useGitignore ? await gitignoreRulesAbove(fs, ctx.rootPath, { signal }) : [];
  const rulesIn = new Map<string, IgnoreRule[]>([[ctx.rootPath, above]]);
  const decided = new Set<string>();
  return {
    pending: (dir) => useGitignore && !decided.has(dir),
    known: (dir) => rulesIn.get(dir) ?? [],
    async get(dir, name, target) {
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
    },
    enter(dir, rules) {
      rulesIn.set(dir, rules);
    },
  };
}
