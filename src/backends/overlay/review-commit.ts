import { toFsError, type FsError } from '../../seam/index.js';
import { TREE_LOCK, isHidden, lowerStat, pathTarget } from './core.js';
import type { ReviewContext } from './review-context.js';
import { blockedAboveConflicts, removalConflicts } from './review-checks.js';
import { journaled } from './journaled.js';
import { runSteps, type CommitRun } from './review-run.js';
import { committable, gitConflicts } from './review-ignored.js';
import { commitSelection, selectionRoots } from './review-select.js';
import { allChanges } from './review-status.js';
import { orderSteps, stepsOf, type Step, type StepOutcome } from './review-steps.js';
import type { OverlayChange, OverlayCommitOptions, OverlayCommitResult } from './review-types.js';

export async function commit(ctx: ReviewContext, paths?: readonly string[], options: OverlayCommitOptions = {}): Promise<OverlayCommitResult> {
  const { signal, onProgress } = options;
  const force = options.force === true;
  const includeIgnored = options.includeIgnored === true;
  const todo = commitSelection(ctx.state, await committable(ctx, allChanges(ctx.state), includeIgnored, signal), await selectionRoots(ctx, paths, signal));
  const steps = orderSteps(todo.flatMap((c, i) => stepsOf(ctx.state, c, i)));
  const remaining = todo.map((_, i) => steps.filter((s) => s.change === i).length);
  const outcomes: (StepOutcome | undefined)[] = todo.map(() => undefined);
  const finish = progress(todo, outcomes, onProgress);
  // Conflicts found before any step runs: no step of theirs touches the lower.
  if (!force) await removalConflicts(ctx, todo, outcomes, signal);
  await blockedAboveConflicts(ctx, todo, outcomes, signal);
  if (includeIgnored && !force) await gitConflicts(ctx, todo, outcomes, signal);
  for (let i = 0; i < todo.length; i++) if (remaining[i] === 0 || outcomes[i] !== undefined) finish(i);
  const run: CommitRun = { todo, outcomes, remaining, signal, force };
  // Journaled before the first write (J1): a commit killed part-way is finished by the next open.
  const keys = journalKeys(ctx, todo, steps, outcomes);
  const payload = { paths: paths === undefined ? null : [...paths], force };
  // A folder whose root takes no journal (not writable here) gets nothing: every change left to
  // commit fails with that error, as each would have failed or half-landed on its own.
  const refused = (err: FsError) => {
    todo.forEach((c, i) => (outcomes[i] ??= { path: c.path, code: err.code, message: err.message }));
    return summary(todo, outcomes);
  };
  return journaled(ctx.lower, { kind: 'commit', owner: ctx.owner, payload, keys, signal, refused }, async () => {
    await runSteps(ctx, steps, run, finish);
    const result = summary(todo, outcomes);
    await dropLowerDirectories(ctx, signal);
    return result;
  });
}

/**
 * The lower keys the commit's steps may touch (none for changes already found conflicting). None
 * at all for an upper kept elsewhere than a state directory: no opener could tell it is the one
 * to finish the commit, and rolling back would lose what that upper had let go of.
 */
function journalKeys(ctx: ReviewContext, todo: readonly OverlayChange[], steps: readonly Step[], outcomes: readonly (StepOutcome | undefined)[]): string[] {
  if (ctx.owner === undefined && ctx.state.persistent) return [];
  return steps.filter((s) => outcomes[s.change] === undefined).flatMap((s) => [s.key, ...(todo[s.change]!.from === undefined ? [] : [todo[s.change]!.from!])]);
}

/** Records a change as finished (committed unless told otherwise) and reports its progress. */
function progress(
  todo: readonly OverlayChange[],
  outcomes: (StepOutcome | undefined)[],
  onProgress: OverlayCommitOptions['onProgress'],
): (i: number) => void {
  let index = 0;
  return (i: number) => {
    const outcome = outcomes[i] ?? 'committed';
    outcomes[i] = outcome;
    index++;
    if (!onProgress) return;
    const kind = typeof outcome === 'string' ? 'committed' : outcome.code === 'FS_CONFLICT' ? 'conflict' : 'failed';
    try {
      onProgress({ path: todo[i]!.path, index, total: todo.length, outcome: kind });
    } catch (err) {
      throw toFsError(err, 'commit stopped by its progress callback');
    }
  };
}

function summary(todo: readonly OverlayChange[], outcomes: readonly (StepOutcome | undefined)[]): OverlayCommitResult {
  const result: OverlayCommitResult = { committed: [], overwritten: [], conflicts: [], failed: [] };
  todo.forEach((c, i) => {
    const outcome = outcomes[i]!;
    if (outcome === 'committed' || outcome === 'overwritten') result.committed.push(c.path);
    if (outcome === 'overwritten') result.overwritten.push(c.path);
    else if (typeof outcome !== 'string') (outcome.code === 'FS_CONFLICT' ? result.conflicts : result.failed).push(outcome);
  });
  return result;
}

/** Directories the overlay made that now exist below are no longer the overlay's to keep. */
async function dropLowerDirectories(ctx: ReviewContext, signal: AbortSignal | undefined): Promise<void> {
  const { lower, state, lock } = ctx;
  await lock.run(TREE_LOCK, async () => {
    const drop: string[] = [];
    for (const dir of state.dirs) {
      if (state.hasFileBelow(dir) || state.opaque.has(dir) || isHidden(state, dir)) continue;
      if ((await lowerStat(lower, pathTarget(dir), signal))?.type === 'directory') drop.push(dir);
    }
    if (drop.length > 0) await state.apply({ dropDirs: drop });
  });
}
