import { compareNames, throwIfAborted, type FsOpOptions } from '../seam/index.js';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { applySteps, Moved, type Step } from './merge-apply.js';
import type { MarkerNames } from './merge-lines.js';
import { decide, type MergeConflict } from './merge-plan.js';
import { sameSide, type Side } from './merge-sides.js';

// One merge into a view, whatever its three sides are (a fork and its parent, or a moved folder
// and a sandbox): decide every path, check the result is a tree, publish it or report.

export interface MergeOptions extends FsOpOptions {
  /** Write conflicting text with git-style markers and apply everything else (default: all or nothing). */
  readonly markers?: boolean;
  /** Decide and report, change nothing. */
  readonly dryRun?: boolean;
}

export interface MergeResult {
  /** The paths (canonical keys) the merge changed, or would change, cleanly; sorted. */
  readonly merged: readonly string[];
  /** Every conflict, sorted by path. With `markers`, text conflicts are also in `marked`. */
  readonly conflicts: readonly MergeConflict[];
  /** With `markers`: the files written with conflict markers (conflicted until they hold none). */
  readonly marked: readonly string[];
  /** True when the view was changed (false: a dry run, nothing to do, or refused for conflicts). */
  readonly applied: boolean;
}

/** The three sides at a path, and the view's side as it is now (to name what moved meanwhile). */
export interface MergeSides {
  base(key: string): Promise<Side>;
  ours(key: string): Promise<Side>;
  theirs(key: string): Promise<Side>;
  current(key: string): Promise<Side>;
}

export async function runMerge(view: OverlayFileSystem, keys: Iterable<string>, sides: MergeSides, options: MergeOptions, names?: MarkerNames): Promise<MergeResult> {
  const markers = options.markers === true;
  const steps: Step[] = [];
  const conflicts: MergeConflict[] = [];
  const marked: string[] = [];
  for (const key of [...new Set(keys)].sort(compareNames)) {
    throwIfAborted(options.signal, 'cannot merge');
    const [base, ours, theirs] = [await sides.base(key), await sides.ours(key), await sides.theirs(key)];
    const d = decide(key, base, ours, theirs, markers, names);
    if (d.kind === 'conflict') conflicts.push(d.conflict);
    if (d.kind !== 'take' || sameSide(ours, d.side)) continue;
    steps.push({ key, now: ours, next: d.side });
    if (d.conflict) {
      conflicts.push(d.conflict);
      marked.push(key);
    }
  }
  const kept = belowConflicts(await keepTree(view, steps, conflicts, options), conflicts);
  const merged = kept.filter((s) => !marked.includes(s.key)).map((s) => s.key);
  conflicts.sort((a, b) => compareNames(a.path, b.path));
  const refused = !markers && conflicts.length > 0;
  if (options.dryRun === true || refused || kept.length === 0) return { merged, conflicts, marked, applied: false };
  try {
    await applySteps(view, kept, options);
  } catch (err) {
    if (!(err instanceof Moved)) throw err;
    return { merged: [], conflicts: await movedMeanwhile(kept, sides), marked: [], applied: false };
  }
  return { merged, conflicts, marked, applied: true };
}

/**
 * A directory that goes (or becomes a file) must be empty once the merge is applied: a path below
 * it that the other side added or changed is a conflict on the directory, and the steps that
 * would have removed it wait.
 */
async function keepTree(view: OverlayFileSystem, steps: readonly Step[], conflicts: MergeConflict[], options: FsOpOptions): Promise<Step[]> {
  const next = new Map(steps.map((s) => [s.key, s.next] as const));
  const blocked = new Set<string>();
  for (const s of steps) {
    if (s.now.kind !== 'dir' || s.next.kind === 'dir') continue;
    const left = await remainsBelow(view, s.key, next, options);
    if (left === undefined) continue;
    blocked.add(s.key);
    conflicts.push({ path: s.key, kind: 'delete-modify', message: `removed on one side, while "${left}" below it remains on the other`, regions: [] });
  }
  // A directory a file below it brings is made by that file's write (one batch, not a step of its own).
  const brought = (s: Step) =>
    s.now.kind === 'absent' && s.next.kind === 'dir' && steps.some((t) => t.next.kind !== 'absent' && t.key.startsWith(`${s.key}/`));
  return steps.filter((s) => !blocked.has(s.key) && !brought(s));
}

/** The first path below `dir` in the view that is still there after the steps, if any. */
async function remainsBelow(view: OverlayFileSystem, dir: string, next: ReadonlyMap<string, Side>, options: FsOpOptions): Promise<string | undefined> {
  const entries = await view.listDir(await view.resolve(dir, options), options);
  for (const entry of entries) {
    const key = entry.target.targetKey as string;
    const after = next.get(key);
    if (after === undefined || after.kind !== 'absent') return key;
    if (entry.type === 'directory') {
      const deeper = await remainsBelow(view, key, next, options);
      if (deeper !== undefined) return deeper;
    }
  }
  return undefined;
}

/** Steps below a path that conflicts (a file against a directory, say) wait with it, as conflicts. */
function belowConflicts(steps: readonly Step[], conflicts: MergeConflict[]): Step[] {
  const blocking = conflicts.filter((c) => c.kind !== 'content').map((c) => c.path);
  const out: Step[] = [];
  for (const s of steps) {
    const above = blocking.find((p) => s.key.startsWith(`${p}/`));
    if (above === undefined) out.push(s);
    else conflicts.push({ path: s.key, kind: 'type', message: `below "${above}", which conflicts`, regions: [] });
  }
  return out;
}

/** After a guard failed: each path whose view no longer shows what the merge was computed against. */
async function movedMeanwhile(steps: readonly Step[], sides: MergeSides): Promise<MergeConflict[]> {
  const out: MergeConflict[] = [];
  for (const s of steps) {
    if (sameSide(await sides.current(s.key), s.now)) continue;
    out.push({ path: s.key, kind: 'changed', message: 'changed while the merge was computed; not overwritten', regions: [] });
  }
  // A guard failed at a path that shows what it showed before (changed and changed back): say so on every step.
  if (out.length === 0) for (const s of steps) out.push({ path: s.key, kind: 'changed', message: 'the view changed while the merge was computed; nothing was overwritten', regions: [] });
  return out;
}
