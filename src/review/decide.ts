import type { OverlayCommitProblem, OverlayFileSystem } from '../backends/overlay/index.js';
import { rebaseFiles, settleLinks, type RebaseItem } from '../backends/overlay/rebase.js';
import { FsError } from '../seam/index.js';
import type { FeedbackStore } from './feedback.js';
import { collect, type Collected } from './files.js';
import { applyHunks, changedLines } from './hunks.js';
import type { ReviewConflict, ReviewDecision, ReviewFeedback, ReviewResult } from './types.js';

// Applying a reviewer's decisions: accepted hunks to the folder, rejected ones out of the sandbox.

/** One file's decisions: on the whole file, or on some of its hunks. */
/** What a plan needs of a review file: the file and its key. */
export type Decidable = Pick<Collected, 'file' | 'key'>;

export interface Plan<C extends Decidable = Collected> {
  readonly c: C;
  readonly accept: Set<string>;
  readonly reject: Map<string, string | undefined>;
}

const encoder = new TextEncoder();

export async function decide(sandbox: OverlayFileSystem, feedback: FeedbackStore, decisions: readonly ReviewDecision[]): Promise<ReviewResult> {
  const plans = planOf(await collect(sandbox), checked(decisions));
  const result = { accepted: [] as string[], rejected: [] as string[], conflicts: [] as ReviewConflict[] };
  const heard: ReviewFeedback[] = [];
  const items: { item: RebaseItem; plan: Plan }[] = [];
  const commits: Plan[] = [];
  const discards: Plan[] = [];
  const links: Plan[] = [];
  for (const plan of plans) {
    const { c, accept, reject } = plan;
    if (c.file.kind === 'symlink') {
      links.push(plan);
      continue;
    }
    const wholeAccept = accept.has(c.file.id) || (c.file.hunks.length > 0 && c.file.hunks.every((h) => accept.has(h.id)));
    const wholeReject = reject.has(c.file.id) || (c.file.hunks.length > 0 && c.file.hunks.every((h) => reject.has(h.id)));
    if (!c.text || (c.text.modeChanged && (wholeAccept || wholeReject))) {
      // Whole files: no lines to pick from (or a mode to take or leave with them).
      if (wholeAccept || accept.size > 0) commits.push(plan);
      else if (wholeReject || reject.size > 0) discards.push(plan);
      continue;
    }
    const { before, after, entry } = c.text;
    const accepted = (id: string) => accept.has(id) || accept.has(c.file.id);
    const rejected = (id: string) => reject.has(id) || reject.has(c.file.id);
    const publish = c.file.hunks.some((h) => accepted(h.id)) ? applyHunks(before, after, c.file.hunks, (h) => accepted(h.id)) : undefined;
    const keep = applyHunks(before, after, c.file.hunks, (h) => !rejected(h.id));
    items.push({ item: { key: c.key, expect: entry, ...(publish === undefined ? {} : { publish: encoder.encode(publish) }), keep: encoder.encode(keep) }, plan });
  }
  const both = commits.filter((p) => discards.some((q) => q.c.key === p.c.key));
  if (both.length > 0) throw new FsError('FS_INVALID_ARGUMENT', `the two halves of a move are decided together: "${both[0]!.c.file.path}" is accepted and its other half rejected`);
  await sandbox.label({ owner: 'reviewer', source: 'review' }, async () => {
    if (items.length > 0) record(items.map((i) => i.plan), (await rebaseFiles(sandbox, items.map((i) => i.item))).conflicts, result, heard);
    if (links.length > 0) record(links, (await settleLinks(sandbox, links.map((p) => ({ key: p.c.key, accept: p.accept.size > 0 })))).conflicts, result, heard);
    if (commits.length > 0) {
      const done = await sandbox.commit([...new Set(commits.map((p) => p.c.key))]);
      record(commits, [...done.conflicts, ...done.failed], result, heard);
    }
    if (discards.length > 0) {
      await sandbox.discard([...new Set(discards.map((p) => p.c.key))]);
      record(discards, [], result, heard);
    }
  });
  if (heard.length > 0) await feedback.add(heard);
  return result;
}

/** Records each plan's decisions as taken, or its file's problem as a conflict. */
export function record<C extends Decidable>(plans: readonly Plan<C>[], problems: readonly OverlayCommitProblem[], result: { accepted: string[]; rejected: string[]; conflicts: ReviewConflict[] }, heard: ReviewFeedback[]): void {
  const failed = new Map(problems.map((p) => [p.path, p] as const));
  for (const plan of plans) {
    const problem = failed.get(plan.c.key);
    if (problem) result.conflicts.push({ path: plan.c.file.path, code: problem.code, message: problem.message });
    else settle(plan, result, heard);
  }
}

/** Records a file's decisions as taken, and what the agent is to hear of its rejections. */
function settle(plan: Plan<Decidable>, result: { accepted: string[]; rejected: string[] }, heard: ReviewFeedback[]): void {
  const { c, accept, reject } = plan;
  result.accepted.push(...accept);
  for (const [id, reason] of reject) {
    result.rejected.push(id);
    const hunk = c.file.hunks.find((h) => h.id === id);
    heard.push({ path: c.file.path, lines: hunk ? changedLines(hunk) : '', reason: reason ?? '', id });
  }
}

export function checked(decisions: readonly ReviewDecision[]): readonly ReviewDecision[] {
  if (!Array.isArray(decisions)) throw new FsError('FS_INVALID_ARGUMENT', 'decisions must be an array');
  const seen = new Map<string, string>();
  for (const d of decisions) {
    if (typeof d?.id !== 'string' || (d.decision !== 'accept' && d.decision !== 'reject')) {
      throw new FsError('FS_INVALID_ARGUMENT', 'each decision needs an id and "accept" or "reject"');
    }
    if (d.reason !== undefined && typeof d.reason !== 'string') throw new FsError('FS_INVALID_ARGUMENT', 'a reason must be a string');
    const before = seen.get(d.id);
    if (before !== undefined && before !== d.decision) throw new FsError('FS_INVALID_ARGUMENT', `"${d.id}" is both accepted and rejected`);
    seen.set(d.id, d.decision);
  }
  return decisions;
}

/** Each decided file's plan; unknown (or changed) ids refuse the whole call. */
export function planOf<C extends Decidable>(files: readonly C[], decisions: readonly ReviewDecision[]): Plan<C>[] {
  const owner = new Map<string, C>();
  for (const c of files) {
    owner.set(c.file.id, c);
    for (const h of c.file.hunks) owner.set(h.id, c);
  }
  const stale = decisions.filter((d) => !owner.has(d.id)).map((d) => d.id);
  if (stale.length > 0) {
    throw new FsError(
      'FS_STALE_VERSION',
      `unknown or stale review id${stale.length === 1 ? '' : 's'}: ${[...new Set(stale)].join(', ')} (the change is gone or changed since it was listed; list the review again); nothing was applied`,
    );
  }
  const plans = new Map<C, Plan<C>>();
  for (const d of decisions) {
    const c = owner.get(d.id)!;
    let plan = plans.get(c);
    if (!plan) plans.set(c, (plan = { c, accept: new Set(), reject: new Map() }));
    if (d.decision === 'accept') plan.accept.add(d.id);
    else plan.reject.set(d.id, d.reason);
  }
  // A file decided as a whole and hunk by hunk: the whole-file decision holds for every hunk.
  for (const plan of plans.values()) {
    if (plan.accept.has(plan.c.file.id) && plan.reject.size > 0) throw new FsError('FS_INVALID_ARGUMENT', `"${plan.c.file.path}" is accepted as a whole and has rejected hunks`);
    if (plan.reject.has(plan.c.file.id) && plan.accept.size > 0) throw new FsError('FS_INVALID_ARGUMENT', `"${plan.c.file.path}" is rejected as a whole and has accepted hunks`);
  }
  return [...plans.values()];
}
