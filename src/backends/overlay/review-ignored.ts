import { posix } from 'node:path';
import { relativeInside } from '../../seam/path.js';
import { decide, type IgnoreRule } from '../../search/dialect.js';
import { gitignoreRulesAbove, pathExists, readIgnoreFile } from '../../search/ignore-files.js';
import { sameStagedEntries } from '../../git/staged-entries.js';
import { lowerFile, lowerStat, pathTarget } from './core.js';
import { conflict } from './problems.js';
import type { ReviewContext } from './review-context.js';
import type { StepOutcome } from './review-steps.js';
import type { OverlayChange, OverlayIgnoredReason } from './review-types.js';

/*
 * Ignored outputs and git's own files. Changes the project's ignore rules exclude (the reading
 * grep and glob use, through the overlay's own view) and everything under `.git/` stay in the
 * sandbox but are counted, not listed, and a commit leaves them out unless asked. A `.git/index`
 * whose staged entries equal the lower's is no change at all: git refreshed its stat cache.
 */

/** The changes, ignored ones marked, a refreshed `.git/index` left out. */
export async function markIgnored(ctx: ReviewContext, changes: readonly OverlayChange[], signal: AbortSignal | undefined): Promise<OverlayChange[]> {
  const isIgnored = ignoreReader(ctx, signal);
  const out: OverlayChange[] = [];
  for (const c of changes) {
    if (await refreshedIndex(ctx, c, signal)) continue;
    const reason = gitPath(ctx.rootKey, c.path) && (c.from === undefined || gitPath(ctx.rootKey, c.from)) ? 'git' : await ruled(isIgnored, c);
    out.push(reason === undefined ? c : { ...c, ignored: reason });
  }
  return out;
}

async function ruled(isIgnored: (key: string, isDir: boolean) => Promise<boolean>, c: OverlayChange): Promise<OverlayIgnoredReason | undefined> {
  const dir = c.type === 'directory';
  if (!(await isIgnored(c.path, dir))) return undefined;
  return c.from === undefined || (await isIgnored(c.from, false)) ? 'gitignore' : undefined;
}

/** Whether `key` lies in a `.git` directory (or is one) below the root. */
function gitPath(rootKey: string, key: string): boolean {
  const rel = relativeInside(rootKey, key);
  return rel !== undefined && rel.split('/').includes('.git');
}

/** A modified `.git/index` holding the staged entries the lower's does. */
async function refreshedIndex(ctx: ReviewContext, c: OverlayChange, signal: AbortSignal | undefined): Promise<boolean> {
  if (c.kind !== 'modified' || c.type !== 'file' || posix.basename(c.path) !== 'index' || posix.basename(posix.dirname(c.path)) !== '.git') return false;
  const entry = ctx.state.entries.get(c.path);
  if (entry?.kind !== 'file') return false;
  const lower = await lowerFile(ctx.lower, pathTarget(c.path), `cannot read "${c.path}"`, signal).catch(() => undefined);
  return lower !== undefined && sameStagedEntries(lower.bytes, entry.bytes);
}

/**
 * Whether ignore rules exclude a key, as the overlay's view shows them: `.git/info/exclude`, then
 * the `.gitignore` of every directory from above the root down. Rules and decisions per
 * directory are read once; nothing below an ignored directory is read.
 */
function ignoreReader(ctx: ReviewContext, signal: AbortSignal | undefined): (key: string, isDir: boolean) => Promise<boolean> {
  const options = signal ? { signal } : {};
  const rules = new Map<string, Promise<IgnoreRule[]>>();
  const ignoredDirs = new Map<string, Promise<boolean>>();
  const rulesIn = (dir: string): Promise<IgnoreRule[]> => {
    let found = rules.get(dir);
    if (found === undefined) {
      // A repository's root (the overlay's root, or a directory holding `.git` below it) starts from its exclude file.
      const fresh = async () => dir === ctx.rootKey || (await pathExists(ctx.view, posix.join(dir, '.git'), signal));
      const inherited = fresh().then((yes) => (yes ? gitignoreRulesAbove(ctx.view, dir, options) : rulesIn(posix.dirname(dir))));
      found = inherited.then(async (above) => [...above, ...(await readIgnoreFile(ctx.view, dir, options))]);
      rules.set(dir, found);
    }
    return found;
  };
  const dirIgnored = (dir: string): Promise<boolean> => {
    if (dir === ctx.rootKey) return Promise.resolve(false);
    let found = ignoredDirs.get(dir);
    if (found === undefined) {
      const parent = posix.dirname(dir);
      found = dirIgnored(parent).then(async (above) => above || decide(await rulesIn(parent), dir, true) === true);
      ignoredDirs.set(dir, found);
    }
    return found;
  };
  return async (key, isDir) => {
    if (key === ctx.rootKey || relativeInside(ctx.rootKey, key) === undefined) return false;
    const parent = posix.dirname(key);
    if (await dirIgnored(parent)) return true;
    return decide(await rulesIn(parent), key, isDir) === true;
  };
}

/** The changes a commit may take: ignored ones only with `includeIgnored`, a refreshed index never. */
export async function committable(
  ctx: ReviewContext,
  all: readonly OverlayChange[],
  includeIgnored: boolean,
  signal: AbortSignal | undefined,
): Promise<OverlayChange[]> {
  return (await markIgnored(ctx, all, signal)).filter((c) => includeIgnored || c.ignored === undefined);
}

/**
 * With `includeIgnored`, git's files go whole or not at all: when any of them (a ref, the index)
 * changed in the lower since the overlay first saw it, every one is a conflict and none is written.
 */
export async function gitConflicts(
  ctx: ReviewContext,
  todo: readonly OverlayChange[],
  outcomes: (StepOutcome | undefined)[],
  signal: AbortSignal | undefined,
): Promise<void> {
  let moved: string | undefined;
  for (const c of todo) {
    if (c.ignored !== 'git' || c.type === 'directory') continue;
    const now = await lowerStat(ctx.lower, pathTarget(c.path), signal);
    if (now?.version !== c.baseVersion) {
      moved = c.path;
      break;
    }
  }
  if (moved === undefined) return;
  todo.forEach((c, i) => {
    if (c.ignored === 'git' && outcomes[i] === undefined) {
      outcomes[i] = conflict(c.path, `cannot commit "${c.path}": "${moved}" changed in the lower since the overlay first saw it, so nothing of git's files was written`);
    }
  });
}
