import { stat } from 'node:fs/promises';
import { toFsError, type FsPendingJournal } from '../../seam/index.js';
import { journalOf } from './journaled.js';
import type { OverlayCommitResult } from './review-types.js';
import type { OverlayFileSystem, OverlayRecovery } from './types.js';

export type { OverlayRecovery } from './types.js';

/** Runs an unfinished operation of `kind` again on the sandbox that started it. */
export type OverlayFinisher = (overlay: OverlayFileSystem, payload: unknown) => Promise<OverlayCommitResult>;

const FINISHERS: Readonly<Record<string, OverlayFinisher>> = {
  commit: (overlay, payload) => {
    const { paths, force } = (payload ?? {}) as { paths?: string[] | null; force?: boolean };
    return overlay.commit(Array.isArray(paths) ? paths : undefined, { force: force === true });
  },
};

/**
 * Finishes or undoes what a killed process left unfinished on the overlay's lower (J1): its own
 * operations are run again, those of a sandbox that no longer exists are undone.
 */
export async function recoverLower(overlay: OverlayFileSystem, owner: string | undefined): Promise<OverlayRecovery[]> {
  const journal = journalOf(overlay.lower);
  if (journal === undefined) return [];
  const out: OverlayRecovery[] = [];
  let found: FsPendingJournal[];
  try {
    found = await journal.pending();
  } catch (err) {
    const e = toFsError(err, 'cannot look for operations a stopped process left unfinished');
    return [{ kind: 'operation', action: 'failed', pid: undefined, owner: undefined, paths: [], message: `${e.code}: ${e.message}` }];
  }
  for (const pending of found) {
    try {
      out.push(await recoverOne(overlay, owner, pending));
    } catch (err) {
      // The sandbox still opens: what the lower holds is left for the next open to finish.
      await pending.release().catch(() => undefined);
      const e = toFsError(err, `cannot recover the ${pending.kind ?? 'operation'} a stopped process left unfinished`);
      out.push({ kind: pending.kind ?? 'operation', action: 'failed', pid: pending.pid, owner: pending.owner, paths: [], message: `${e.code}: ${e.message}` });
    }
  }
  return out;
}

async function recoverOne(overlay: OverlayFileSystem, owner: string | undefined, p: FsPendingJournal): Promise<OverlayRecovery> {
  const kind = p.kind ?? 'operation';
  const by = p.pid === undefined ? 'a process that was stopped' : `process ${p.pid}, which was stopped`;
  const base = { kind, pid: p.pid, owner: p.owner };
  const finisher = p.kind === undefined ? undefined : FINISHERS[p.kind];
  if (finisher !== undefined && owner !== undefined && p.owner === owner) {
    const result = await finisher(overlay, p.payload);
    await p.discard();
    const n = result.committed.length;
    const rest = result.conflicts.length + result.failed.length;
    return {
      ...base,
      action: 'finished',
      paths: result.committed,
      result,
      message: `finished the ${kind} that ${by}, had left unfinished: ${n} more path${n === 1 ? '' : 's'} committed${rest > 0 ? `, ${rest} not (see its result)` : ''}`,
    };
  }
  if (p.kind !== undefined && p.owner !== undefined && p.owner !== owner && (await stillKept(p.owner))) {
    await p.release();
    return { ...base, action: 'left', paths: [], message: `a ${kind} that ${by}, left unfinished belongs to the sandbox in ${p.owner}: opening it finishes the ${kind}` };
  }
  const paths = await p.rollBack();
  const n = paths.length;
  return { ...base, action: 'rolledBack', paths, message: `rolled back the ${kind} that ${by}, had left unfinished (nothing can finish it): ${n} path${n === 1 ? '' : 's'} put back` };
}

async function stillKept(stateDir: string): Promise<boolean> {
  try {
    return (await stat(stateDir)).isDirectory();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw toFsError(err, `cannot tell whether the sandbox in "${stateDir}" still exists`);
  }
}
