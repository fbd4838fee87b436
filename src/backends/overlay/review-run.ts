import { posix } from 'node:path';
import { isWithin, throwIfAborted, toFsError } from '../../seam/index.js';
import { forEachBounded } from '../../seam/settle.js';
import { TREE_LOCK, isHidden, lowerStat, pathTarget } from './core.js';
import { conflict, type OverlayCommitProblem } from './problems.js';
import type { ReviewContext } from './review-context.js';
import { commitDirectory } from './review-dir.js';
import { commitFile, commitRename } from './review-file.js';
import type { Batch, Step, StepOutcome } from './review-steps.js';
import type { OverlayChange } from './review-types.js';

/** Files of one commit published at once (their temp-file fsyncs overlap). */
const COMMIT_CONCURRENCY = 8;

/** One commit under way: its changes and, by index, what became of each and how many steps it has left. */
export interface CommitRun {
  readonly todo: readonly OverlayChange[];
  readonly outcomes: (StepOutcome | undefined)[];
  readonly remaining: number[];
  readonly signal: AbortSignal | undefined;
  readonly force: boolean;
}

/** Runs a step; returns the change to report as finished, if this step finished it. */
type RunStep = (step: Step, batch?: Batch) => Promise<number | undefined>;

async function runStep(
  ctx: ReviewContext,
  step: Step,
  change: OverlayChange,
  signal: AbortSignal | undefined,
  force: boolean,
  batch?: Batch,
): Promise<StepOutcome> {
  const { state, lock } = ctx;
  const path = change.path;
  const what = `cannot commit "${step.key}"`;
  const fail = (err: unknown): OverlayCommitProblem => {
    const e = toFsError(err, what);
    if (e.code === 'FS_ABORTED') throw e;
    return { path, code: e.code, message: e.message };
  };
  // What appears in the view below a removed directory whose removal did not reach the lower
  // would vanish from the view if published now.
  if (step.phase === 2 && isHidden(state, posix.dirname(step.key)) && step.key !== '/') {
    return conflict(path, `${what}: it lies in a removed directory whose removal was not committed`);
  }
  try {
    switch (step.op) {
      case 'write':
      case 'remove':
        return await lock.run(step.key, () => commitFile(ctx, step, change, what, signal, force, batch));
      case 'rename':
        return await commitRename(ctx, path, what, signal, force);
      case 'rmdir':
      case 'mkdir':
        return await lock.run(step.key, () => lock.run(TREE_LOCK, () => commitDirectory(ctx, step, path, what, signal, force)));
    }
  } catch (err) {
    return fail(err);
  }
}

function stepRunner(ctx: ReviewContext, run: CommitRun): RunStep {
  const { lower, rootKey } = ctx;
  const { todo, outcomes, remaining, signal, force } = run;
  // Sources of moves that did not go through and are still in the lower, known once the
  // creations start: nothing is created at or below one (it would half-do the move).
  let stuck: Map<string, string> | undefined;
  const stuckSources = async () => {
    const found = new Map<string, string>();
    for (const [i, c] of todo.entries()) {
      if (c.from === undefined || typeof outcomes[i] !== 'object') continue;
      if ((await lowerStat(lower, pathTarget(c.from), signal)) !== undefined) found.set(c.from, c.path);
    }
    return found;
  };
  return async (step: Step, batch?: Batch): Promise<number | undefined> => {
    throwIfAborted(signal, 'commit');
    const i = step.change;
    // An earlier step of this change failed: the change stops there (and was reported).
    if (typeof outcomes[i] === 'object') return undefined;
    if (step.phase === 2) {
      stuck ??= await stuckSources();
      for (let k = step.key; stuck.size > 0 && isWithin(rootKey, k) && k !== '/'; k = posix.dirname(k)) {
        const to = stuck.get(k);
        if (to === undefined) continue;
        outcomes[i] = conflict(todo[i]!.path, `cannot commit "${todo[i]!.path}": the lower still has "${k}", whose move to "${to}" was not committed; the lower was not changed`);
        return i;
      }
    }
    const outcome = await runStep(ctx, step, todo[i]!, signal, force, batch);
    if (typeof outcome === 'object' || outcome === 'overwritten' || outcomes[i] === undefined) outcomes[i] = outcome;
    return typeof outcome === 'object' || --remaining[i]! === 0 ? i : undefined;
  };
}

/**
 * Runs `steps` in order, calling `finish` with each change as its last step ends. Renames,
 * removals and directories one by one, in order; then the files, which depend on nothing but
 * their own path, several at once with deferred durability (F1) when the lower can flush: every
 * directory is flushed once, and only then are they dropped from the upper.
 */
export async function runSteps(ctx: ReviewContext, steps: readonly Step[], commitRun: CommitRun, finish: (i: number) => void): Promise<void> {
  const run = stepRunner(ctx, commitRun);
  const batched = ctx.lower.flush !== undefined;
  const files = batched ? steps.filter((s) => s.phase === 2 && s.op === 'write') : [];
  const inBatch = new Set(files);
  for (const step of steps) {
    if (inBatch.has(step)) continue;
    const done = await run(step);
    if (done !== undefined) finish(done);
  }
  if (files.length > 0) {
    const batch: Batch = { dirs: new Set(), settle: [] };
    // Progress in step order, as without the batch: a file done early waits for those before it.
    const finished: (number | undefined | null)[] = files.map(() => null);
    let reported = 0;
    // After a failure no file starts, and those under way finish first: none outlives the commit.
    let failure: { err: unknown } | undefined;
    await forEachBounded(files, COMMIT_CONCURRENCY, async (step, k) => {
      finished[k] = await run(step, batch);
      for (; reported < files.length && finished[reported] !== null; reported++) {
        const i = finished[reported];
        if (i !== undefined && i !== null) finish(i);
      }
    }).catch((err: unknown) => (failure = { err }));
    // Even after an abort: what was published is flushed and leaves the upper.
    await settle(ctx, batch, commitRun.outcomes);
    if (failure !== undefined) throw failure.err;
  }
}

/** Flushes a batch's directories, then drops its files from the upper (unless changed meanwhile). */
async function settle(ctx: ReviewContext, batch: Batch, outcomes: (StepOutcome | undefined)[]): Promise<void> {
  const { lower, state, lock } = ctx;
  if (batch.settle.length === 0) return;
  try {
    // Not abortable: what was published must become durable and leave the upper, or stay in it.
    await lower.flush!([...batch.dirs].map(pathTarget));
  } catch (err) {
    // Published but perhaps not durable: the upper keeps them, so a later commit finds them
    // already in the lower (or publishes them again); nothing is lost either way.
    const e = toFsError(err, 'cannot flush the committed files to disk');
    for (const [key, , , i] of batch.settle) {
      outcomes[i] = { path: key, code: e.code, message: `cannot commit "${key}": it was written, but ${e.message}; the overlay keeps it` };
    }
    return;
  }
  // Concurrently, so a persistent upper saves them together.
  await Promise.all(
    batch.settle.map(([key, published, done, i]) =>
      lock
        .run(key, () => (state.entries.get(key) === published ? state.apply({ entries: [[key, done]] }) : undefined))
        .catch((err: unknown) => {
          const e = toFsError(err, `cannot commit "${key}"`);
          outcomes[i] = { path: key, code: e.code, message: e.message };
        }),
    ),
  );
}
