import { posix } from 'node:path';
import { compareNames } from '../../seam/index.js';
import { isHidden } from './core.js';
import type { UpperEntry, UpperState } from './state.js';
import type { OverlayCommitProblem } from './problems.js';
import type { OverlayChange } from './review-types.js';

/** One step of a commit; a change has one to three of them, run in phase order. */
export interface Step {
  /** 0: atomic renames; 1: removals, deepest first; 2: creations, shallowest first. */
  readonly phase: 0 | 1 | 2;
  readonly op: 'rename' | 'remove' | 'rmdir' | 'mkdir' | 'write';
  readonly key: string;
  /** Index of the change it belongs to. */
  readonly change: number;
}

export type StepOutcome = 'committed' | 'overwritten' | OverlayCommitProblem;

/**
 * Files published with deferred durability (F1): their directories are flushed once, and only
 * then does the upper let go of them, so a crash never loses a change the upper dropped.
 */
export interface Batch {
  readonly dirs: Set<string>;
  /** Key, the entry that was published, and what the upper holds once it is durable. */
  readonly settle: Array<readonly [string, UpperEntry, UpperEntry | undefined, number]>;
}

const OP_RANK: Record<Step['op'], number> = { rename: 0, remove: 0, rmdir: 1, mkdir: 0, write: 1 };

/** The steps that publish one change. */
export function stepsOf(state: UpperState, c: OverlayChange, index: number): Step[] {
  const step = (phase: Step['phase'], op: Step['op'], key: string): Step => ({ phase, op, key, change: index });
  if (c.type === 'directory') {
    if (c.kind === 'added') return [step(2, 'mkdir', c.path)];
    if (c.kind === 'deleted') return [step(1, 'rmdir', c.path)];
    return [step(1, 'rmdir', c.path), step(2, 'mkdir', c.path)];
  }
  if (c.kind === 'deleted') return [step(1, 'remove', c.path)];
  if (c.type === 'link') return [step(2, 'write', c.path)];
  const entry = state.entries.get(c.path);
  if (entry?.kind !== 'file') return [];
  const steps: Step[] = [];
  if (c.kind === 'renamed') {
    const from = c.from!;
    // The lower's own atomic rename when the content is what the lower holds at the source and
    // nothing at or above the new name must go from the lower first.
    const unchanged = entry.origin?.version !== undefined && entry.origin.version === entry.version;
    if (unchanged && !isHidden(state, c.path) && !fileRemovedAbove(state, c.path)) return [step(0, 'rename', c.path)];
    steps.push(step(1, 'remove', from));
  }
  // Below a removed directory the lower's file there goes first (guarded), so the directory can go.
  if (entry.base !== undefined && isHidden(state, c.path)) steps.push(step(1, 'remove', c.path));
  steps.push(step(2, 'write', c.path));
  return steps;
}

function fileRemovedAbove(state: UpperState, key: string): boolean {
  for (let d = posix.dirname(key); d !== '/' && d !== '.'; d = posix.dirname(d)) {
    if (state.entries.get(d)?.kind === 'whiteout') return true;
  }
  return false;
}

/** Steps in the order that keeps every one possible: renames, removals deepest first, then creations. */
export function orderSteps(steps: Step[]): Step[] {
  return steps.sort((a, b) => {
    if (a.phase !== b.phase) return a.phase - b.phase;
    const byPath = a.phase === 1 ? compareNames(b.key, a.key) : compareNames(a.key, b.key);
    return byPath || OP_RANK[a.op] - OP_RANK[b.op];
  });
}
