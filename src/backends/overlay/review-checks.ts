import { posix } from 'node:path';
import { isWithin } from '../../seam/index.js';
import { isHidden, lowerStat, pathTarget } from './core.js';
import { conflict } from './problems.js';
import type { ReviewContext } from './review-context.js';
import type { StepOutcome } from './review-steps.js';
import type { OverlayChange } from './review-types.js';

// Conflicts a commit finds in the lower before any step runs: no step of theirs touches the lower.

/**
 * A removed directory whose lower gained or changed something below is a conflict, and so is what
 * would appear inside it.
 */
export async function removalConflicts(
  ctx: ReviewContext,
  todo: readonly OverlayChange[],
  outcomes: (StepOutcome | undefined)[],
  signal: AbortSignal | undefined,
): Promise<void> {
  for (const [i, c] of todo.entries()) {
    if (c.type !== 'directory' || c.kind === 'added') continue;
    const why = await removalBlocked(ctx, c.path, signal);
    if (why === undefined) continue;
    outcomes[i] = conflict(c.path, `cannot commit "${c.path}": the lower changed since the overlay removed this directory (${why}); the lower was not changed`);
    todo.forEach((d, j) => {
      const inside = d.path.startsWith(`${c.path}/`) || (d.path === c.path && d.type === 'file');
      if (j !== i && d.kind !== 'deleted' && inside && outcomes[j] === undefined) {
        outcomes[j] = conflict(d.path, `cannot commit "${d.path}": it lies in the removed directory "${c.path}", whose removal conflicts`);
      }
    });
  }
}

/**
 * Where the view has a directory and the lower now has a file (or another non-directory) the
 * overlay never saw, nothing below can be published: those changes conflict, and so do removed
 * directories whose files were moving there (their removal waits).
 */
export async function blockedAboveConflicts(
  ctx: ReviewContext,
  todo: readonly OverlayChange[],
  outcomes: (StepOutcome | undefined)[],
  signal: AbortSignal | undefined,
): Promise<void> {
  const blockedAbove = await nonDirectoriesAbove(ctx, todo, signal);
  const waiting: string[] = [];
  for (const [i, c] of todo.entries()) {
    const above = blockedAbove.get(c.path);
    if (above === undefined || c.kind === 'deleted' || outcomes[i] !== undefined) continue;
    outcomes[i] = conflict(
      c.path,
      `cannot commit "${c.path}": the lower now has a ${above.type} at "${above.key}", where the overlay has a directory; the lower was not changed`,
    );
    // A source already gone from the lower holds nothing back.
    if (c.from !== undefined && (await lowerStat(ctx.lower, pathTarget(c.from), signal)) !== undefined) waiting.push(c.from);
  }
  todo.forEach((c, i) => {
    if (c.type !== 'directory' || c.kind === 'added' || outcomes[i] !== undefined) return;
    const moved = waiting.find((from) => from.startsWith(c.path === '/' ? '/' : `${c.path}/`));
    if (moved === undefined) return;
    outcomes[i] = conflict(c.path, `cannot commit "${c.path}": "${moved}" below it was moved to a path that conflicts, so the directory stays; the lower was not changed`);
  });
}

/**
 * For each change whose path lies below a lower non-directory the overlay did not remove (a file
 * that appeared underneath where the view has a directory): that ancestor. One stat per distinct
 * ancestor, top down, stopping where the lower has nothing.
 */
async function nonDirectoriesAbove(
  ctx: ReviewContext,
  todo: readonly OverlayChange[],
  signal: AbortSignal | undefined,
): Promise<Map<string, { key: string; type: string }>> {
  const { lower, state, rootKey } = ctx;
  type Seen = 'directory' | 'nothing' | { key: string; type: string };
  const found = new Map<string, { key: string; type: string }>();
  const seen = new Map<string, Seen>();
  const check = async (dir: string): Promise<Seen> => {
    // The lower's root and what lies above it are not the overlay's to check.
    if (dir === rootKey || !isWithin(rootKey, dir)) return 'directory';
    const known = seen.get(dir);
    if (known !== undefined) return known;
    const up = await check(posix.dirname(dir));
    let here: Seen = up;
    // A whiteout here is the overlay's own removal (its step runs first); below a removed
    // directory, what appeared is that directory's conflict.
    if (up === 'directory') {
      if (state.entries.get(dir)?.kind === 'whiteout' || isHidden(state, dir)) here = 'nothing';
      else {
        const info = await lowerStat(lower, pathTarget(dir), signal);
        here = info === undefined ? 'nothing' : info.type === 'directory' ? 'directory' : { key: dir, type: info.type };
      }
    }
    seen.set(dir, here);
    return here;
  };
  for (const c of todo) {
    if (c.kind === 'deleted') continue;
    const blocker = await check(posix.dirname(c.path));
    if (typeof blocker === 'object') found.set(c.path, blocker);
  }
  return found;
}

/** Why the lower's directory cannot simply go (something the overlay never saw), or undefined. */
export async function removalBlocked(ctx: ReviewContext, dir: string, signal: AbortSignal | undefined): Promise<string | undefined> {
  const { lower, state } = ctx;
  const info = await lowerStat(lower, pathTarget(dir), signal);
  if (info === undefined) return undefined;
  if (info.type !== 'directory') return `found a ${info.type} there`;
  for await (const e of lower.walk(pathTarget(dir), { signal })) {
    const key = posix.join(dir, e.path);
    if (e.target.targetKey !== key || e.type === 'other') return `"${key}" is a symlink or special file`;
    if (e.type === 'directory') {
      if (!state.opaque.has(key)) return `the directory "${key}" appeared`;
      continue;
    }
    const entry = state.entries.get(key);
    if (entry?.base === undefined) return `"${key}" appeared`;
    const now = await lowerStat(lower, pathTarget(key), signal);
    if (now?.version !== entry.base) return `"${key}" changed`;
  }
  return undefined;
}
