import { posix } from 'node:path';
import { isFsError, type FileSystem, type FsOpOptions, type FsTarget } from '../seam/index.js';
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

async function pathExists(fs: FileSystem, path: string, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    return (await fs.stat(await fs.resolve(path, { signal }), { signal, versioned: false })) !== undefined;
  } catch (err) {
    if (isFsError(err, 'FS_ABORTED')) throw err;
    return false;
  }
}
