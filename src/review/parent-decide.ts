import type { OverlayCommitProblem, OverlayFileSystem } from '../backends/overlay/index.js';
import type { UpperState } from '../backends/overlay/state.js';
import { checked, planOf, record, type Plan } from './decide.js';
import type { FeedbackStore } from './feedback.js';
import { applyHunks } from './hunks.js';
import { runMerge } from './merge-run.js';
import { lowerSides, sideAt, type Side } from './merge-sides.js';
import { collectAgainstParent, parentMovedOn, type ParentCollected } from './parent.js';
import type { ReviewDecision, ReviewFeedback, ReviewResult } from './types.js';

// Applying a reviewer's decisions on a fork against its parent: accepted hunks to the parent,
// rejected ones out of the fork. Each side's writes go through merge's publishing (guarded by
// what was read, a directory removed only when empty), so each is one change of that sandbox.

type ParentPlan = Plan<ParentCollected>;

/** What a decided file is to become: in the parent (accepted), in the fork (rejected). */
interface Targets {
  parent?: Side;
  fork?: Side;
}

const encoder = new TextEncoder();
const LABEL = { owner: 'reviewer', source: 'review' } as const;

export async function decideAgainstParent(parent: OverlayFileSystem, fork: OverlayFileSystem, feedback: FeedbackStore, decisions: readonly ReviewDecision[]): Promise<ReviewResult> {
  const { pair, files } = await collectAgainstParent(parent, fork);
  const plans = planOf(files, checked(decisions));
  const problems: OverlayCommitProblem[] = [];
  const targets = new Map<ParentPlan, Targets>();
  for (const plan of plans) {
    const next = targetsOf(plan);
    if (next.parent !== undefined && parentMovedOn(plan.c.key, plan.c.sides)) {
      problems.push({ path: plan.c.key, code: 'FS_CONFLICT', message: 'changed in the parent since the fork: nothing was written (dsh-fs merge combines both sides)' });
    } else targets.set(plan, next);
  }
  const sides = {
    parent: { view: parent, state: pair.parentState, now: (p: ParentPlan) => p.c.sides.parent },
    fork: { view: fork, state: pair.forkState, now: (p: ParentPlan) => p.c.sides.fork },
  };
  // What either side would refuse (a directory that is not empty): nothing written for that file on either side.
  for (const side of ['parent', 'fork'] as const) dropConflicts(targets, problems, await publish(sides[side], targets, side, true));
  for (const side of ['parent', 'fork'] as const) {
    const refused = await sides[side].view.label(LABEL, () => publish(sides[side], targets, side, false));
    dropConflicts(targets, problems, refused);
  }
  const result = { accepted: [] as string[], rejected: [] as string[], conflicts: [] as ReviewResult['conflicts'][number][] };
  const heard: ReviewFeedback[] = [];
  record(plans, problems, result, heard);
  if (heard.length > 0) await feedback.add(heard);
  return result;
}

/** The parent's side after the accepted hunks, the fork's after the rejected ones. */
function targetsOf({ c, accept, reject }: ParentPlan): Targets {
  const { parent, fork } = c.sides;
  const all = (ids: Set<string> | Map<string, unknown>) => ids.has(c.file.id) || (c.file.hunks.length > 0 && c.file.hunks.every((h) => ids.has(h.id)));
  // Whole files, and text decided as a whole (its executable bit goes with it).
  if (c.text === undefined || parent.kind !== 'file' || fork.kind !== 'file' || all(accept) || all(reject)) {
    return accept.size > 0 ? { parent: fork } : reject.size > 0 ? { fork: parent } : {};
  }
  const { before, after } = c.text;
  const next: Targets = {};
  if (accept.size > 0) next.parent = { ...parent, bytes: encoder.encode(applyHunks(before, after, c.file.hunks, (h) => accept.has(h.id))) };
  if (reject.size > 0) next.fork = { ...fork, bytes: encoder.encode(applyHunks(before, after, c.file.hunks, (h) => !reject.has(h.id))) };
  return next;
}

interface SideOf {
  readonly view: OverlayFileSystem;
  readonly state: UpperState;
  now(plan: ParentPlan): Side;
}

/** Publishes (or with `dryRun` checks) one side's targets; the conflicts by key. */
async function publish(side: SideOf, targets: ReadonlyMap<ParentPlan, Targets>, which: keyof Targets, dryRun: boolean): Promise<Map<string, string>> {
  const now = new Map<string, Side>();
  const next = new Map<string, Side>();
  for (const [plan, t] of targets) {
    const to = t[which];
    if (to === undefined) continue;
    now.set(plan.c.key, side.now(plan));
    next.set(plan.c.key, to);
  }
  if (next.size === 0) return new Map();
  const at = (map: Map<string, Side>) => (key: string) => Promise.resolve(map.get(key)!);
  const current = (key: string) => sideAt(lowerSides(side.view.lower, undefined), side.state.snapshot(), key);
  const r = await runMerge(side.view, next.keys(), { base: at(now), ours: at(now), theirs: at(next), current }, { dryRun });
  const conflicts = new Map(r.conflicts.map((c) => [c.path, c.message] as const));
  // Applied all or nothing: once refused, no path of this side was written.
  if (!dryRun && conflicts.size > 0) for (const key of next.keys()) if (!conflicts.has(key)) conflicts.set(key, 'not written: another path of the same decision changed meanwhile');
  return conflicts;
}

/** Files with a conflict on either side are not decided: their targets go, their problem is told. */
function dropConflicts(targets: Map<ParentPlan, Targets>, problems: OverlayCommitProblem[], conflicts: ReadonlyMap<string, string>): void {
  for (const plan of [...targets.keys()]) {
    const message = conflicts.get(plan.c.key);
    if (message === undefined) continue;
    targets.delete(plan);
    problems.push({ path: plan.c.key, code: 'FS_CONFLICT', message });
  }
}
