import { compareNames, isFsError, type FsChange, type FsOpOptions } from '../seam/index.js';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import type { Side } from './merge-sides.js';

// Publishing a merge's result to the side merged into, through its ordinary operations: a change
// of files' bytes only (the usual case) is one guarded batch, so one change and one checkpoint;
// anything else (directories, links, executable bits, a file becoming a directory) is a sequence
// of guarded steps, taken back as a whole (rewind) when one fails.

/** One path to change: what the view shows there now (the guard) and what it is to show. */
export interface Step {
  readonly key: string;
  readonly now: Side;
  readonly next: Side;
}

/** A guard that did not hold: the view changed at one of `keys` while the merge was computed. */
export class Moved extends Error {
  constructor(override readonly cause: unknown) {
    super('the view changed while the merge was computed');
  }
}

const GUARD_CODES = ['FS_CONFLICT', 'FS_ALREADY_EXISTS', 'FS_NOT_FOUND', 'FS_NOT_EMPTY', 'FS_NOT_DIRECTORY', 'FS_STALE_VERSION'] as const;

const isGuardFailure = (err: unknown) => GUARD_CODES.some((code) => isFsError(err, code));

/** True when the step only rewrites, creates or removes a file's bytes, keeping its executable bit. */
function bytesOnly({ now, next }: Step): boolean {
  const fileOrAbsent = (s: Side) => s.kind === 'file' || s.kind === 'absent';
  if (!fileOrAbsent(now) || !fileOrAbsent(next)) return false;
  const bit = (s: Side) => s.kind === 'file' && s.executable;
  return next.kind === 'absent' || bit(next) === bit(now);
}

export async function applySteps(view: OverlayFileSystem, steps: readonly Step[], options: FsOpOptions): Promise<void> {
  if (steps.length === 0) return;
  if (steps.every(bytesOnly)) return applyBatch(view, steps, options);
  const before = view.checkpoints().at(-1)?.id;
  const hadChanges = before === undefined && (await view.changes()).length > 0;
  try {
    await applyOneByOne(view, steps, options);
  } catch (err) {
    if (before !== undefined) await view.rewind(before);
    else if (!hadChanges) await view.discard();
    throw isGuardFailure(err) ? new Moved(err) : err;
  }
}

async function applyBatch(view: OverlayFileSystem, steps: readonly Step[], options: FsOpOptions): Promise<void> {
  const changes: FsChange[] = [];
  for (const { key, now, next } of steps) {
    const target = await view.resolve(key, options);
    const version = now.kind === 'file' ? now.version : undefined;
    if (next.kind === 'file') {
      const intent = version === undefined ? ({ kind: 'createIfAbsent' } as const) : ({ kind: 'replaceIfVersion', version } as const);
      changes.push({ kind: 'write', target, bytes: next.bytes, intent });
    } else if (version !== undefined) {
      changes.push({ kind: 'remove', target, version });
    }
  }
  try {
    await view.applyChanges!(changes, options);
  } catch (err) {
    throw isGuardFailure(err) ? new Moved(err) : err;
  }
}

async function applyOneByOne(view: OverlayFileSystem, steps: readonly Step[], options: FsOpOptions): Promise<void> {
  const target = (key: string) => view.resolve(key, { ...options, noFollow: true });
  // Removals first, deepest first: what goes, or changes its type, or a link that changes its text.
  const going = steps.filter(({ now, next }) => now.kind !== 'absent' && (next.kind !== now.kind || now.kind === 'link'));
  for (const { key, now } of [...going].sort((a, b) => compareNames(b.key, a.key))) {
    if (now.kind === 'file') await view.remove(await target(key), { kind: 'replaceIfVersion', version: now.version }, options);
    else if (now.kind === 'link') await view.removeLink!(await target(key), options);
    else if (now.kind === 'dir') await view.rmdir(await target(key), options);
  }
  // Then creations and rewrites, parents first.
  for (const { key, now, next } of [...steps].sort((a, b) => compareNames(a.key, b.key))) {
    const kept = now.kind === next.kind && now.kind !== 'link';
    if (next.kind === 'dir' && !kept) await view.mkdir(await target(key), options);
    if (next.kind === 'link') await view.symlink!(await target(key), next.text, options);
    if (next.kind !== 'file') continue;
    const old = kept && now.kind === 'file' ? now : undefined;
    if (old === undefined || Buffer.compare(old.bytes, next.bytes) !== 0) {
      const intent = old ? ({ kind: 'replaceIfVersion', version: old.version } as const) : ({ kind: 'createIfAbsent' } as const);
      await view.writeBytes(await target(key), next.bytes, intent, options);
    }
    if (next.executable !== (old?.executable ?? false)) await view.setExecutable!(await target(key), next.executable, options);
  }
}
