import { compareNames, contentVersion, FsError, throwIfAborted, type FsVersion } from '../seam/index.js';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { upperStateOf } from '../backends/overlay/compose.js';
import type { UpperEntry, UpperFile } from '../backends/overlay/state.js';
import { BASE_BYTES_MAX } from '../backends/overlay/base-bytes.js';
import { isText } from './merge-lines.js';
import { decide, type MergeConflict } from './merge-plan.js';
import type { MergeOptions, MergeResult } from './merge-run.js';
import { ABSENT, lowerSides, sideAt, type Side } from './merge-sides.js';

const NAMES = { ours: 'sandbox', theirs: 'folder' };

/**
 * Three-way merges what changed in the lower (the project folder) since the sandbox first read each
 * path it changed: base = the lower's content then (kept at copy-up), ours = the sandbox, theirs =
 * the lower now. A merged path takes the lower's current version as its new base, so a later commit
 * conflicts only where the edits overlapped. One change of the sandbox (one checkpoint). See docs/merge.md.
 */
export async function sync(sandbox: OverlayFileSystem, options: MergeOptions = {}): Promise<MergeResult> {
  const state = upperStateOf(sandbox);
  if (state === undefined) throw new FsError('FS_INVALID_ARGUMENT', 'sync takes an overlay (createOverlayFs)');
  const layer = state.snapshot();
  const lowerAt = lowerSides(sandbox.lower, options.signal);
  const merged: string[] = [];
  const marked: string[] = [];
  const conflicts: MergeConflict[] = [];
  const entries: [string, UpperEntry | undefined][] = [];
  for (const [key, entry] of [...layer.entries].sort(([a], [b]) => compareNames(a, b))) {
    throwIfAborted(options.signal, 'cannot sync');
    if (entry.kind === 'file' && entry.origin !== undefined) continue; // a move: commit checks its source
    const theirs = await lowerAt(key);
    if (versionOf(theirs) === entry.base) continue; // the folder did not change there
    if (entry.kind === 'link') {
      conflicts.push({ path: key, kind: 'type', message: 'a link in the sandbox, changed in the folder', regions: [] });
      continue;
    }
    if (entry.kind === 'whiteout') {
      if (theirs.kind === 'absent') {
        entries.push([key, undefined]); // removed on both sides
        merged.push(key);
      } else {
        conflicts.push({ path: key, kind: 'delete-modify', message: 'removed in the sandbox, changed in the folder', regions: [] });
      }
      continue;
    }
    const ours = await sideAt(lowerAt, layer, key);
    const base = baseOf(entry, theirs);
    if (base === undefined) {
      conflicts.push({ path: key, kind: 'content', message: 'changed in the folder and in the sandbox; its first content was not kept (not text, or over 256 KiB)', regions: [] });
      continue;
    }
    const d = decide(key, base, ours, theirs, options.markers === true, NAMES);
    if (d.kind === 'conflict') {
      conflicts.push(d.conflict);
      continue;
    }
    const next = d.kind === 'keep' ? ours : d.side;
    const rebased = rebase(next, theirs);
    if (rebased === 'unsupported') {
      conflicts.push({ path: key, kind: 'type', message: 'changed in the folder and in the sandbox into something other than a file', regions: [] });
      continue;
    }
    entries.push([key, rebased]);
    if (d.kind === 'take' && d.conflict) {
      conflicts.push(d.conflict);
      marked.push(key);
    } else {
      merged.push(key);
    }
  }
  conflicts.sort((a, b) => compareNames(a.path, b.path));
  const refused = options.markers !== true && conflicts.length > 0;
  if (options.dryRun === true || refused || entries.length === 0) return { merged, conflicts, marked, applied: false };
  // Nothing else ran since the snapshot (no await between the check and the apply): the entries are still those merged.
  const moved = entries.filter(([key]) => state.entries.get(key) !== layer.entries.get(key)).map(([key]) => key);
  if (moved.length > 0) {
    const changed = moved.map((path): MergeConflict => ({ path, kind: 'changed', message: 'changed while the sync was computed; not overwritten', regions: [] }));
    return { merged: [], conflicts: changed, marked: [], applied: false };
  }
  await state.apply({ entries, label: { ...state.currentLabel(), source: 'sync' } });
  return { merged, conflicts, marked, applied: true };
}

function versionOf(side: Side): FsVersion | undefined {
  return side.kind === 'file' ? side.version : undefined;
}

/** The base side: what the lower had when the sandbox first changed the path (undefined: not kept). */
function baseOf(entry: UpperEntry, lowerNow: Side): Side | undefined {
  if (entry.base === undefined) return ABSENT;
  if (entry.kind !== 'file' || entry.baseBytes === undefined) return undefined;
  const executable = lowerNow.kind === 'file' ? lowerNow.executable : false;
  return { kind: 'file', bytes: entry.baseBytes, version: entry.base, executable };
}

/** The upper entry showing `next` over the lower as it is now (`theirs`), with that as its base. */
function rebase(next: Side, theirs: Side): UpperEntry | undefined | 'unsupported' {
  const base = versionOf(theirs);
  if (next.kind === 'absent') return theirs.kind === 'absent' ? undefined : { kind: 'whiteout', base };
  if (next.kind !== 'file') return 'unsupported';
  if (theirs.kind === 'file' && theirs.executable === next.executable && Buffer.compare(theirs.bytes, next.bytes) === 0) return undefined;
  const baseBytes = theirs.kind === 'file' ? theirs.bytes : undefined;
  const file: UpperFile = {
    kind: 'file',
    bytes: next.bytes,
    version: contentVersion(next.bytes),
    mtimeMs: Date.now(),
    base,
    ...(next.executable ? { executable: true } : {}),
    ...(baseBytes && baseBytes.byteLength <= BASE_BYTES_MAX && isText(baseBytes) ? { baseBytes } : {}),
  };
  return file;
}
