import type { FileSystem, FsChange, FsVersion } from '../../seam/index.js';
import { applyWithRollback } from '../../seam/batch.js';
import type { PlannedChange } from './plan.js';

// The publish phase of apply_patch: the checked plan goes to the filesystem as one batch of
// guarded changes (B1), each guarded by the version the check phase read. The seam makes it all or
// nothing: in one step where the backend can, else with a rollback (see docs/tools.md).

export interface Published {
  readonly change: PlannedChange;
  /** The version the file has now; undefined for a delete. */
  readonly version: FsVersion | undefined;
}

/** The guarded change that publishes one planned change. */
function toChange(c: PlannedChange): FsChange {
  const { target, current } = c;
  if (c.bytes === null) return { kind: 'remove', target, version: current!.version };
  if (c.dest !== undefined) {
    return { kind: 'move', from: target, to: c.dest.target, expect: current!.version, replace: c.dest.current?.version ?? false, bytes: c.bytes };
  }
  const intent = current === undefined ? ({ kind: 'createIfAbsent' } as const) : ({ kind: 'replaceIfVersion', version: current.version } as const);
  return { kind: 'write', target, bytes: c.bytes, intent };
}

/** Publishes a checked plan all or nothing; a failure names the file and says nothing was changed. */
export async function publishPlan(fs: FileSystem, plan: readonly PlannedChange[], signal?: AbortSignal): Promise<Published[]> {
  const changes = plan.map(toChange);
  const opts = signal ? { signal } : {};
  const { versions } = fs.applyChanges ? await fs.applyChanges(changes, opts) : await applyWithRollback(fs, changes, opts);
  return plan.map((change, i) => ({ change, version: versions[i] }));
}
