import { isText, mergeText, type MarkerNames, type MergeRegion } from './merge-lines.js';
import { sameSide, type Side } from './merge-sides.js';

// The three-way rule for one path, given what the base, ours (the side merged into) and theirs
// show there. Pure: no reads, no writes.

export type MergeConflictKind = 'content' | 'delete-modify' | 'type' | 'binary' | 'changed';

export interface MergeConflict {
  /** The path's canonical key. */
  readonly path: string;
  readonly kind: MergeConflictKind;
  /** What collided, in a sentence. */
  readonly message: string;
  /** For `content`: each conflicting region's base, ours and theirs lines; otherwise empty. */
  readonly regions: readonly MergeRegion[];
}

export type Decision =
  /** Ours stays as it is. */
  | { readonly kind: 'keep' }
  /** Ours becomes `side`; `marked` when it holds conflict markers (then `conflict` says why). */
  | { readonly kind: 'take'; readonly side: Side; readonly conflict?: MergeConflict }
  | { readonly kind: 'conflict'; readonly conflict: MergeConflict };

const KEEP: Decision = { kind: 'keep' };

/** The decision at `key`; `markers` writes conflicting text with markers instead of refusing it. */
export function decide(key: string, base: Side, ours: Side, theirs: Side, markers: boolean, names?: MarkerNames): Decision {
  if (sameSide(ours, theirs) || sameSide(base, theirs)) return KEEP;
  if (sameSide(base, ours)) return { kind: 'take', side: theirs };
  const conflict = (kind: MergeConflictKind, message: string): Decision => ({ kind: 'conflict', conflict: { path: key, kind, message, regions: [] } });
  if (ours.kind === 'file' && theirs.kind === 'file') return bothFiles(key, base, ours, theirs, markers, names);
  if (ours.kind === 'absent' || theirs.kind === 'absent') {
    const [gone, kept] = ours.kind === 'absent' ? ['ours', 'theirs'] : ['theirs', 'ours'];
    return conflict('delete-modify', `removed in ${gone}, changed in ${kept}`);
  }
  if (ours.kind === 'dir' && theirs.kind === 'dir') return KEEP;
  return conflict('type', `${describe(ours)} in ours, ${describe(theirs)} in theirs`);
}

type FileSide = Extract<Side, { kind: 'file' }>;

function bothFiles(key: string, base: Side, ours: FileSide, theirs: FileSide, markers: boolean, names?: MarkerNames): Decision {
  const b = base.kind === 'file' ? base : undefined;
  // The executable bit merges as a bit: one side's change wins; both changed it the same way.
  const executable = ours.executable === theirs.executable || b?.executable !== ours.executable ? ours.executable : theirs.executable;
  const file = (bytes: Uint8Array): Side => ({ kind: 'file', bytes, version: ours.version, executable });
  if (Buffer.compare(ours.bytes, theirs.bytes) === 0) return { kind: 'take', side: file(ours.bytes) };
  if (b !== undefined && Buffer.compare(b.bytes, ours.bytes) === 0) return { kind: 'take', side: file(theirs.bytes) };
  if (b !== undefined && Buffer.compare(b.bytes, theirs.bytes) === 0) return { kind: 'take', side: file(ours.bytes) };
  if (!isText(ours.bytes) || !isText(theirs.bytes) || (b !== undefined && !isText(b.bytes))) {
    return { kind: 'conflict', conflict: { path: key, kind: 'binary', message: 'changed on both sides, and not text', regions: [] } };
  }
  const merged = mergeText(b?.bytes, ours.bytes, theirs.bytes, names);
  if (merged.ok) return { kind: 'take', side: file(merged.bytes) };
  const n = merged.regions.length;
  const conflict: MergeConflict = { path: key, kind: 'content', message: `${n} overlapping edit${n === 1 ? '' : 's'}`, regions: merged.regions };
  return markers ? { kind: 'take', side: file(merged.withMarkers), conflict } : { kind: 'conflict', conflict };
}

function describe(side: Side): string {
  switch (side.kind) {
    case 'file':
      return 'a file';
    case 'dir':
      return 'a directory';
    case 'link':
      return `a symlink to "${side.text}"`;
    case 'other':
      return 'a special file';
    default:
      return 'nothing';
  }
}
