import { posix } from 'node:path';
import { isFsError, type FileSystem, type FsOpOptions, type FsTarget } from '../seam/index.js';
import { compareNames } from '../seam/resolve.js';
import { parseGitignore, type IgnoreRule } from './dialect.js';

/**
 * The `.gitignore` rules that apply inside `dir` from above it: the repository's
 * `.git/info/exclude` (the repository being the nearest ancestor holding `.git`), then every
 * ancestor's `.gitignore` from the outermost down, excluding `dir`'s own. Shared by grep and the
 * list tool, so there is one reading of ignore files.
 */
export async function gitignoreRulesAbove(fs: FileSystem, dir: string, options: FsOpOptions = {}): Promise<IgnoreRule[]> {
  const { signal } = options;
  const chain: string[] = [];
  let repository: string | undefined;
  // Up to the repository root (a directory holding `.git`) or the filesystem's root.
  for (let d = dir; ; d = posix.dirname(d)) {
    if (d !== dir) chain.unshift(d);
    if (await pathExists(fs, posix.join(d, '.git'), signal)) {
      repository = d;
      break;
    }
    if (d === '/' || (fs.root !== undefined && d === fs.root)) break;
  }
  // The repository's own exclude file comes first: every .gitignore rule overrides it.
  const rules: IgnoreRule[] = repository === undefined ? [] : await readIgnoreFile(fs, repository, { file: '.git/info/exclude', ...(signal ? { signal } : {}) });
  for (const d of chain) rules.push(...(await readIgnoreFile(fs, d, signal ? { signal } : {})));
  return rules;
}

/**
 * The rules of an ignore file (`.gitignore` in `dir` unless `file` names another), anchored at
 * `dir`; none when it is missing or unreadable (an ignore file never fails a search).
 */
export async function readIgnoreFile(
  fs: FileSystem,
  dir: string,
  options: FsOpOptions & { readonly target?: FsTarget; readonly file?: string } = {},
): Promise<IgnoreRule[]> {
  const { signal } = options;
  const path = posix.join(dir, options.file ?? '.gitignore');
  try {
    const t = options.target ?? (await fs.resolve(path, { signal }));
    if (options.target === undefined && (await fs.stat(t, { signal, versioned: false }))?.type !== 'file') return [];
    return parseGitignore((await fs.readText(t, { signal })).text, dir);
  } catch (err) {
    if (isFsError(err, 'FS_ABORTED')) throw err;
    return [];
  }
}

/** Whether anything is at `path` (a failure to look counts as nothing, an abort excepted). */
export async function pathExists(fs: FileSystem, path: string, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    return (await fs.stat(await fs.resolve(path, { signal }), { signal, versioned: false })) !== undefined;
  } catch (err) {
    if (isFsError(err, 'FS_ABORTED')) throw err;
    return false;
  }
}

/** The ignore rules in force in each directory a walk from one directory enters. */
export interface IgnoreRulesWalk {
  /** Whether `get` may still have to read the directory's own ignore file. */
  pending(dir: string): boolean;
  /** The rules in force in `dir` once nothing is pending there. */
  known(dir: string): IgnoreRule[];
  /** The rules in force in `dir`, given the first entry the walk met there. */
  get(dir: string, name: string, target: FsTarget): Promise<IgnoreRule[]>;
  /** A directory the walk enters, with the rules in force in its parent. */
  enter(dir: string, rules: IgnoreRule[]): void;
}

/**
 * The rules in force in each directory entered (outer files first), for walks in tree order:
 * grep's and glob's. A directory's own `.gitignore` sorts among its first entries, so it is read
 * when the walk reaches the first entry at or past that name; an entry sorting before it (`-x`,
 * `#y`) asks for it directly. With `use` false there are none.
 */
export async function ignoreRulesWalk(fs: FileSystem, top: string, use: boolean, signal: AbortSignal | undefined): Promise<IgnoreRulesWalk> {
  const readRules = (dir: string, target?: FsTarget): Promise<IgnoreRule[]> =>
    readIgnoreFile(fs, dir, { ...(signal ? { signal } : {}), ...(target ? { target } : {}) });
  const above = use ? await gitignoreRulesAbove(fs, top, signal ? { signal } : {}) : [];
  const rulesIn = new Map<string, IgnoreRule[]>([[top, above]]);
  const decided = new Set<string>();
  return {
    pending: (dir) => use && !decided.has(dir),
    known: (dir) => rulesIn.get(dir) ?? [],
    async get(dir, name, target) {
      const inherited = rulesIn.get(dir) ?? [];
      if (!use || decided.has(dir)) return inherited;
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
