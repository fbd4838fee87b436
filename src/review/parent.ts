import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { compareNames } from '../seam/index.js';
import { coreOf, contentFile, decode, relative, whole, type Collected } from './files.js';
import { forkPair, type ForkPair } from './fork-pair.js';
import { decide as mergeDecision } from './merge-plan.js';
import { lowerSides, sameSide, sideAt, type Side } from './merge-sides.js';
import type { ReviewFile } from './types.js';

// A fork's changes against its parent as review files: where the fork changed something since
// the fork, the parent's view now against the fork's view, hunk by hunk.

/** What the three layers show at the path: the parent at the fork, the parent now, the fork now. */
export interface ParentSides {
  readonly base: Side;
  readonly parent: Side;
  readonly fork: Side;
}

export interface ParentCollected extends Pick<Collected, 'file' | 'key'> {
  readonly sides: ParentSides;
  /** Set for a text file on both sides, decided hunk by hunk. */
  readonly text?: { readonly before: string; readonly after: string };
}

/** Every path the fork changed since the fork where the parent does not already show the same, sorted by path. */
export async function collectAgainstParent(parent: OverlayFileSystem, fork: OverlayFileSystem, signal?: AbortSignal): Promise<{ pair: ForkPair; files: ParentCollected[] }> {
  const pair = await forkPair(parent, fork, 'a review against the parent');
  const { rootKey } = coreOf(fork);
  const changes = await fork.changes(undefined, { against: 'parent', ...(signal === undefined ? {} : { signal }) });
  const lowerAt = lowerSides(fork.lower, signal);
  const parentNow = pair.parentState.snapshot();
  const forkNow = pair.forkState.snapshot();
  const files: ParentCollected[] = [];
  for (const { path: key } of changes) {
    const sides = { base: await sideAt(lowerAt, pair.base, key), parent: await sideAt(lowerAt, parentNow, key), fork: await sideAt(lowerAt, forkNow, key) };
    // Nothing to decide: the parent shows the fork's side already, or the fork left the path as it found it.
    if (sameSide(sides.parent, sides.fork) || sameSide(sides.base, sides.fork)) continue;
    files.push({ ...reviewFile(relative(rootKey, key), key, sides.parent, sides.fork), sides });
  }
  files.sort((a, b) => compareNames(a.file.path, b.file.path));
  return { pair, files };
}

/**
 * True when the parent changed the path since the fork in a way the fork did not: anything but
 * taking some of the fork's own changes (hunks accepted before). Accepting then would overwrite
 * the parent's work, so it is a conflict.
 */
export function parentMovedOn(key: string, { base, parent, fork }: ParentSides): boolean {
  if (sameSide(base, parent)) return false;
  const d = mergeDecision(key, base, parent, fork, false);
  return !(d.kind === 'take' && d.conflict === undefined && sameSide(d.side, fork));
}

function reviewFile(path: string, key: string, parent: Side, fork: Side): Omit<ParentCollected, 'sides'> {
  const status: ReviewFile['status'] = parent.kind === 'absent' ? 'added' : fork.kind === 'absent' ? 'deleted' : 'modified';
  const kinds = [parent.kind, fork.kind];
  if (kinds.includes('dir')) return whole(path, key, status, 'directory', kinds);
  if (parent.kind === 'link' || fork.kind === 'link') return whole(path, key, status, 'symlink', [linkText(parent), linkText(fork)]);
  if (parent.kind === 'other' || fork.kind === 'other') return whole(path, key, status, 'binary', kinds);
  const before = parent.kind === 'file' ? parent : undefined;
  const after = fork.kind === 'file' ? fork : undefined;
  const collected = contentFile(path, key, status, before?.bytes, after?.bytes, before?.executable === true, after?.executable === true);
  if (collected.file.kind !== 'text' || before === undefined || after === undefined) return collected;
  return { ...collected, text: { before: decode(before.bytes), after: decode(after.bytes) } };
}

function linkText(side: Side): string {
  return side.kind === 'link' ? side.text : side.kind;
}
