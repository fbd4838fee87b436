import { FsError, toFsError, type FileSystem, type FsVersion } from '../../seam/index.js';
import type { PlannedChange } from './plan.js';

// The publish phase of apply_patch: each planned change is written under the version guard of the
// check phase; each success leaves an undo step guarded by the version it just wrote. If a write
// fails, the undo steps run newest first, so every file ends as it was. Rollback is best effort
// and not crash-atomic: a process that dies part-way leaves the files already written.

export interface Published {
  readonly change: PlannedChange;
  /** The version the file has now; undefined for a delete. */
  readonly version: FsVersion | undefined;
}

type Undo = { readonly path: string; run(): Promise<void> };

/** Writes one change; pushes its undo steps as each part succeeds. */
async function publishOne(fs: FileSystem, c: PlannedChange, undo: Undo[]): Promise<FsVersion | undefined> {
  const { target, current } = c;
  const path = target.displayPath;
  if (c.bytes === null) {
    // A delete: the bytes come back only where nothing new was created meanwhile.
    await fs.remove(target, { kind: 'replaceIfVersion', version: current!.version });
    undo.push({ path, run: async () => void (await fs.writeBytes(target, current!.bytes, { kind: 'createIfAbsent' })) });
    return undefined;
  }
  let at = target;
  if (c.dest !== undefined) {
    const dest = c.dest;
    await fs.rename(target, dest.target, { expect: current!.version, replace: dest.current?.version ?? false });
    undo.push({
      path,
      run: async () => {
        await fs.rename(dest.target, target, { expect: current!.version, replace: false });
        if (dest.current !== undefined) await fs.writeBytes(dest.target, dest.current.bytes, { kind: 'createIfAbsent' });
      },
    });
    at = dest.target;
  }
  const intent = current === undefined ? ({ kind: 'createIfAbsent' } as const) : ({ kind: 'replaceIfVersion', version: current.version } as const);
  const outcome = await fs.writeBytes(at, c.bytes, intent);
  const written = { kind: 'replaceIfVersion', version: outcome.version } as const;
  undo.push({
    path: at.displayPath,
    run: async () => {
      if (current === undefined) await fs.remove(at, written);
      else await fs.writeBytes(at, current.bytes, written);
    },
  });
  return outcome.version;
}

/**
 * Publishes a checked plan all or nothing. On a failure the changes already written are undone and
 * the error names the file; if an undo fails too, the error lists the files left changed.
 */
export async function publishPlan(fs: FileSystem, plan: readonly PlannedChange[]): Promise<Published[]> {
  const undo: Undo[] = [];
  const done: Published[] = [];
  for (const change of plan) {
    try {
      done.push({ change, version: await publishOne(fs, change, undo) });
    } catch (err) {
      const error = toFsError(err, `cannot write "${change.target.displayPath}"`);
      const left: string[] = [];
      for (const step of undo.reverse()) {
        try {
          await step.run();
        } catch (undoErr) {
          left.push(`"${step.path}" (${toFsError(undoErr, 'undo failed').message})`);
        }
      }
      const where = `while writing "${change.target.displayPath}" (file ${done.length + 1} of ${plan.length})`;
      const outcome =
        left.length === 0
          ? `nothing was changed${done.length > 0 ? ` (the ${done.length} file${done.length === 1 ? '' : 's'} already written ${done.length === 1 ? 'was' : 'were'} restored)` : ''}`
          : `the rollback failed, so these files may hold the patch's content: ${left.join(', ')}`;
      throw new FsError(error.code, `the patch failed ${where}: ${error.message}; ${outcome}`, { cause: error });
    }
  }
  return done;
}
