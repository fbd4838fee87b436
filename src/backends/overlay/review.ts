import { posix } from 'node:path';
import {
  FsError,
  compareNames,
  isFsError,
  isWithin,
  throwIfAborted,
  toFsError,
  type FileSystem,
  type FsOpOptions,
  type FsTarget,
  type FsVersion,
  type FsWriteOptions,
} from '../../seam/index.js';
import { forEachBounded, settleAll } from '../../seam/settle.js';
import { TREE_LOCK, bytesEqual, hasUpperDescendant, isHidden, lowerFile, lowerIfSame, lowerStat, pathTarget, type OverlayCore } from './core.js';
import type { UpperEntry } from './state.js';
import { publishMode } from './modes.js';
import { isLinkVersion } from './links.js';
import { commitLink, linkDiff } from './link-review.js';
import { conflict, type OverlayCommitProblem } from './problems.js';
import { fileDiff, renameDiff } from './file-diff.js';

export type OverlayChangeKind = 'added' | 'modified' | 'deleted' | 'renamed';

export interface OverlayChange {
  /** The canonical path (its target key in the lower); for a rename, the new name. */
  readonly path: string;
  /**
   * Files: added, modified, deleted, or renamed (moved from `from`, possibly also edited).
   * Directories: added (an empty directory made in the overlay), deleted (a lower directory
   * removed), modified (a lower directory removed and made again: its lower contents go).
   */
  readonly kind: OverlayChangeKind;
  /** `link`: a symbolic link made, replaced or removed in the overlay (K1, K2). */
  readonly type?: 'file' | 'directory' | 'link';
  /** For `renamed`: the path the file was moved from (in the lower). */
  readonly from?: string;
  /**
   * The lower's version when the overlay first changed this path; undefined when the lower had
   * no file there. Commit writes only if the lower still has this version.
   */
  readonly baseVersion: FsVersion | undefined;
  /** The overlay's version of the file (added, modified, renamed). */
  readonly version?: FsVersion;
  readonly size?: number;
  /** Files the overlay holds (added, modified, renamed): true when the file is executable (X1). */
  readonly executable?: boolean;
  /** Links the overlay holds (added, modified): the link's text. */
  readonly linkText?: string;
}

export type { OverlayCommitProblem } from './problems.js';

export interface OverlayCommitResult {
  /** Paths now in the lower; they left the upper layer. */
  readonly committed: string[];
  /** Those of `committed` that replaced a lower file changed since the overlay first saw it (`force`). */
  readonly overwritten: string[];
  /** Paths whose lower file changed since the overlay first saw it (FS_CONFLICT); the lower was not touched. */
  readonly conflicts: OverlayCommitProblem[];
  /** Paths that failed for another reason (permissions, I/O, a parent that is not a directory...). */
  readonly failed: OverlayCommitProblem[];
}

export interface OverlayCommitProgress {
  readonly path: string;
  /** 1-based position of this path among those being committed. */
  readonly index: number;
  readonly total: number;
  readonly outcome: 'committed' | 'conflict' | 'failed';
}

export interface OverlayCommitOptions extends FsOpOptions {
  onProgress?(progress: OverlayCommitProgress): void;
  /**
   * Commit conflicting paths too, replacing (or removing) what the lower holds now: for after a
   * person has looked at the conflict. A path that now leads elsewhere in the lower (through a
   * symlink) is still refused.
   */
  readonly force?: boolean;
}

/** One step of a commit; a change has one to three of them, run in phase order. */
interface Step {
  /** 0: atomic renames; 1: removals, deepest first; 2: creations, shallowest first. */
  readonly phase: 0 | 1 | 2;
  readonly op: 'rename' | 'remove' | 'rmdir' | 'mkdir' | 'write';
  readonly key: string;
  /** Index of the change it belongs to. */
  readonly change: number;
}

type StepOutcome = 'committed' | 'overwritten' | OverlayCommitProblem;

/**
 * Files published with deferred durability (F1): their directories are flushed once, and only
 * then does the upper let go of them, so a crash never loses a change the upper dropped.
 */
interface Batch {
  readonly dirs: Set<string>;
  /** Key, the entry that was published, and what the upper holds once it is durable. */
  readonly settle: Array<readonly [string, UpperEntry, UpperEntry | undefined, number]>;
}

/** Files of one commit published at once (their temp-file fsyncs overlap). */
const COMMIT_CONCURRENCY = 8;

const OP_RANK: Record<Step['op'], number> = { rename: 0, remove: 0, rmdir: 1, mkdir: 0, write: 1 };

export function createReview(core: OverlayCore, view: FileSystem) {
  const { lower, state, rootKey, lock } = core;

  /** Roots selected by `paths`: each path selects itself and everything beneath it. */
  async function selectionRoots(paths: readonly string[] | undefined, signal: AbortSignal | undefined): Promise<string[] | undefined> {
    if (paths === undefined) return undefined;
    if (!Array.isArray(paths)) throw new FsError('FS_INVALID_ARGUMENT', 'paths must be an array of strings');
    const roots: string[] = [];
    for (const p of paths) roots.push((await view.resolve(p, { signal })).targetKey);
    return roots;
  }

  const within = (roots: readonly string[] | undefined, key: string) => roots === undefined || roots.some((r) => isWithin(r, key));
  /** A change is selected by its path or, for a rename, by where it came from. */
  const picks = (roots: readonly string[] | undefined, c: OverlayChange) => within(roots, c.path) || (c.from !== undefined && within(roots, c.from));

  /** Every change of the upper layer, sorted by path (at one path, a removal first). */
  function allChanges(): OverlayChange[] {
    const entries = [...state.entries].sort(([a], [b]) => compareNames(a, b));
    // A source whiteout is shown as part of one rename: that of the first file (by path) moved from it.
    const claimed = new Map<string, string>();
    for (const [key, e] of entries) {
      if (e.kind !== 'file' || e.origin === undefined) continue;
      const from = e.origin.path;
      if (state.entries.get(from)?.kind === 'whiteout' && !claimed.has(from)) claimed.set(from, key);
    }
    const out: OverlayChange[] = [];
    for (const [key, e] of entries) {
      if (e.kind === 'whiteout') {
        if (!claimed.has(key)) out.push({ path: key, kind: 'deleted', type: isLinkVersion(e.base) ? 'link' : 'file', baseVersion: e.base });
        continue;
      }
      if (e.kind === 'link') {
        out.push({ path: key, kind: e.base === undefined ? 'added' : 'modified', type: 'link', baseVersion: e.base, linkText: e.text });
        continue;
      }
      const renamed = e.origin !== undefined && claimed.get(e.origin.path) === key;
      out.push({
        path: key,
        kind: renamed ? 'renamed' : e.base === undefined ? 'added' : 'modified',
        type: 'file',
        ...(renamed ? { from: e.origin!.path } : {}),
        baseVersion: e.base,
        version: e.version,
        size: e.bytes.byteLength,
        ...(e.executable ? { executable: true } : {}),
      });
    }
    // Directories: only those nothing else implies (an empty one made here), and removed lower ones.
    const holders = new Set<string>();
    const hold = (key: string) => {
      for (let d = posix.dirname(key); !holders.has(d); d = posix.dirname(d)) {
        holders.add(d);
        if (d === '/') break;
      }
    };
    for (const [key, e] of entries) if (e.kind !== 'whiteout') hold(key);
    for (const dir of state.dirs) hold(dir);
    for (const dir of state.dirs) {
      if (!state.opaque.has(dir) && !holders.has(dir)) out.push({ path: dir, kind: 'added', type: 'directory', baseVersion: undefined });
    }
    for (const dir of state.opaque) {
      out.push({ path: dir, kind: state.dirs.has(dir) ? 'modified' : 'deleted', type: 'directory', baseVersion: undefined });
    }
    const rank = (c: OverlayChange) => (c.kind === 'deleted' ? 0 : 1);
    return out.sort((a, b) => compareNames(a.path, b.path) || rank(a) - rank(b));
  }

  async function changes(paths?: readonly string[], options: FsOpOptions = {}): Promise<OverlayChange[]> {
    const roots = await selectionRoots(paths, options.signal);
    return allChanges().filter((c) => picks(roots, c));
  }

  async function diff(paths?: readonly string[], options: FsOpOptions = {}): Promise<string> {
    const signal = options.signal;
    let out = '';
    const lowerBytes = async (key: string) => {
      try {
        return (await lowerFile(lower, pathTarget(key), `cannot diff "${key}"`, signal))?.bytes;
      } catch (err) {
        if (!isFsError(err, 'FS_NOT_REGULAR_FILE')) throw err;
        return undefined;
      }
    };
    const lowerExecutable = async (key: string) => (await lowerStat(lower, pathTarget(key), signal))?.executable === true;
    for (const change of await changes(paths, options)) {
      throwIfAborted(signal, 'cannot diff the overlay');
      // Directories are not shown, as in git: their files are.
      if (change.type === 'directory') continue;
      const entry = state.entries.get(change.path);
      if (!entry) continue;
      if (change.type === 'link' || isLinkVersion(entry.base)) {
        out += await linkDiff(core, displayName(rootKey, change.path), change.path, entry, signal);
        continue;
      }
      const after = entry.kind === 'file' ? entry.bytes : undefined;
      if (change.kind === 'renamed') {
        // A file the move replaced at the new name goes first, as its own removal.
        out += fileDiff(displayName(rootKey, change.path), await lowerBytes(change.path), undefined);
        const modes = { before: await lowerExecutable(change.from!), after: change.executable === true };
        out += renameDiff(displayName(rootKey, change.from!), displayName(rootKey, change.path), await lowerBytes(change.from!), after, modes);
        continue;
      }
      const before = await lowerBytes(change.path);
      const modes = { before: before !== undefined && (await lowerExecutable(change.path)), after: change.executable === true };
      out += fileDiff(displayName(rootKey, change.path), before, after, modes);
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Commit
  // ---------------------------------------------------------------------------------------------

  /** The steps that publish one change. */
  function stepsOf(c: OverlayChange, index: number): Step[] {
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
      if (unchanged && !isHidden(state, c.path) && !fileRemovedAbove(c.path)) return [step(0, 'rename', c.path)];
      steps.push(step(1, 'remove', from));
    }
    // Below a removed directory the lower's file there goes first (guarded), so the directory can go.
    if (entry.base !== undefined && isHidden(state, c.path)) steps.push(step(1, 'remove', c.path));
    steps.push(step(2, 'write', c.path));
    return steps;
  }

  function fileRemovedAbove(key: string): boolean {
    for (let d = posix.dirname(key); d !== '/' && d !== '.'; d = posix.dirname(d)) {
      if (state.entries.get(d)?.kind === 'whiteout') return true;
    }
    return false;
  }

  /** Steps in the order that keeps every one possible: renames, removals deepest first, then creations. */
  function orderSteps(steps: Step[]): Step[] {
    return steps.sort((a, b) => {
      if (a.phase !== b.phase) return a.phase - b.phase;
      const byPath = a.phase === 1 ? compareNames(b.key, a.key) : compareNames(a.key, b.key);
      return byPath || OP_RANK[a.op] - OP_RANK[b.op];
    });
  }

  /** The lower's target for `key`, or a conflict when the path now leads elsewhere there. */
  async function lowerTarget(key: string, what: string, signal: AbortSignal | undefined): Promise<FsTarget | OverlayCommitProblem> {
    const target = await lower.resolve(key, { signal });
    if (target.targetKey !== key) return conflict(key, `${what}: the path now leads to "${target.targetKey}" in the lower layer`);
    return target;
  }

  async function runStep(step: Step, change: OverlayChange, signal: AbortSignal | undefined, force: boolean, batch?: Batch): Promise<StepOutcome> {
    const path = change.path;
    const what = `cannot commit "${step.key}"`;
    const fail = (err: unknown): OverlayCommitProblem => {
      const e = toFsError(err, what);
      if (e.code === 'FS_ABORTED') throw e;
      return { path, code: e.code, message: e.message };
    };
    // What appears in the view below a removed directory whose removal did not reach the lower
    // would vanish from the view if published now.
    if (step.phase === 2 && isHidden(state, posix.dirname(step.key)) && step.key !== '/') {
      return conflict(path, `${what}: it lies in a removed directory whose removal was not committed`);
    }
    try {
      switch (step.op) {
        case 'write':
        case 'remove':
          return await lock.run(step.key, () => commitFile(step, change, what, signal, force, batch));
        case 'rename':
          return await commitRename(path, what, signal, force);
        case 'rmdir':
        case 'mkdir':
          return await lock.run(step.key, () => lock.run(TREE_LOCK, () => commitDirectory(step, path, what, signal, force)));
      }
    } catch (err) {
      return fail(err);
    }
  }

  /** A file's write, or a removal (a whiteout, a moved file's source, a lower file below a removed directory). */
  async function commitFile(
    step: Step,
    change: OverlayChange,
    what: string,
    signal: AbortSignal | undefined,
    force: boolean,
    batch?: Batch,
  ): Promise<StepOutcome> {
    const path = change.path;
    const entry = state.entries.get(step.key);
    if (!entry) return 'committed';
    if (entry.kind === 'link' || isLinkVersion(entry.base)) return commitLink(core, step.key, entry, what, signal, force);
    // A move published as a removal and a write: the source goes only if the new name can still
    // take the file, so a conflict there leaves the move whole (nothing half-written).
    if (step.op === 'remove' && change.from === step.key && !force) {
      const moved = state.entries.get(path);
      if (moved?.kind === 'file') {
        const dst = await lowerTarget(path, what, signal);
        if (!('targetKey' in dst)) return dst;
        const ready = isHidden(state, path) || (await lowerAsBase(dst, moved, signal)) || (await lowerHolds(dst, moved, signal));
        if (!ready) return conflict(path, await conflictMessage(`cannot commit "${path}"`, dst, moved, signal));
      }
    }
    // A removal step for a file entry removes the lower's file under it, then the entry is new.
    const desired: UpperEntry = step.op === 'remove' && entry.kind === 'file' ? { kind: 'whiteout', base: entry.base } : entry;
    const done: UpperEntry | undefined =
      entry.kind === 'file' && desired !== entry
        ? { kind: 'file', bytes: entry.bytes, version: entry.version, mtimeMs: entry.mtimeMs, base: undefined, ...(entry.executable ? { executable: true } : {}) }
        : undefined;
    if (step.op === 'write' && entry.kind !== 'file') return 'committed';
    const target = await lowerTarget(step.key, what, signal);
    if (!('targetKey' in target)) return { ...target, path };
    let overwritten = false;
    try {
      await publish(target, desired, signal, batch);
    } catch (err) {
      if (isFsError(err, 'FS_ABORTED')) throw err;
      // Not a conflict when the lower is still as the overlay first saw it (e.g. a parent is a file).
      if (!isFsError(err, 'FS_STALE_VERSION') && !isFsError(err, 'FS_NOT_OBSERVED') && (await lowerAsBase(target, desired, signal))) {
        throw err;
      }
      // Someone already made the lower what the overlay wants: nothing to overwrite, nothing lost.
      // Not so for a changed file's lower copy that went underneath: the change was made to it.
      const replacing = desired !== entry && entry.base !== undefined;
      if (replacing || !(await lowerHolds(target, desired, signal))) {
        if (!force) return conflict(path, await conflictMessage(what, target, desired, signal));
        await overwrite(target, desired, signal, batch);
        overwritten = true;
      }
    }
    if (batch) {
      batch.settle.push([step.key, entry, done, step.change]);
      for (let d = posix.dirname(target.targetKey); isWithin(rootKey, d) && !batch.dirs.has(d); d = posix.dirname(d)) {
        // Ancestors too: a directory the write made is durable only once its parent is flushed.
        batch.dirs.add(d);
        if (d === rootKey || d === '/') break;
      }
    } else await state.apply({ entries: [[step.key, done]] });
    return overwritten ? 'overwritten' : 'committed';
  }

  /** A move published with the lower's atomic rename, guarded at both names. */
  async function commitRename(path: string, what: string, signal: AbortSignal | undefined, force: boolean): Promise<StepOutcome> {
    const first = state.entries.get(path);
    if (first?.kind !== 'file' || first.origin === undefined) return 'committed';
    const from = first.origin.path;
    const [k1, k2] = [from, path].sort();
    return lock.run(k1!, () =>
      lock.run(k2!, async () => {
        const entry = state.entries.get(path);
        const source = state.entries.get(from);
        if (entry?.kind !== 'file' || source?.kind !== 'whiteout') return 'committed';
        const src = await lowerTarget(from, what, signal);
        if (!('targetKey' in src)) return { ...src, path };
        const dst = await lowerTarget(path, what, signal);
        if (!('targetKey' in dst)) return dst;
        let overwritten = false;
        try {
          await lower.rename(src, dst, { ...(source.base === undefined ? {} : { expect: source.base }), replace: entry.base ?? false, signal });
          await publishMode(lower, dst, entry, signal);
        } catch (err) {
          if (isFsError(err, 'FS_ABORTED')) throw err;
          const srcAsBase = await lowerAsBase(src, source, signal);
          const dstAsBase = await lowerAsBase(dst, entry, signal);
          if (srcAsBase && dstAsBase) throw err;
          if (srcAsBase && (await lowerHolds(dst, entry, signal))) {
            // The new name already holds this content underneath: only the source is left to remove.
            await publish(src, source, signal);
            await state.apply({ entries: [[path, undefined], [from, undefined]] });
            return 'committed';
          }
          const srcGone = (await lowerStat(lower, src, signal)) === undefined;
          if (srcGone && dstAsBase) {
            // The source went underneath: that side is already as wanted; the content is the overlay's.
            await publish(dst, entry, signal);
            await state.apply({ entries: [[path, undefined], [from, undefined]] });
            return 'committed';
          }
          const done = (await lowerStat(lower, src, signal)) === undefined && (await lowerHolds(dst, entry, signal));
          if (!done) {
            if (!force) {
              const bad = srcAsBase ? dst : src;
              return conflict(path, await conflictMessage(what, bad, bad === src ? source : entry, signal));
            }
            await overwrite(dst, entry, signal);
            await overwrite(src, source, signal);
            overwritten = true;
          }
        }
        await state.apply({ entries: [[path, undefined], [from, undefined]] });
        return overwritten ? 'overwritten' : 'committed';
      }),
    );
  }

  /** A removed lower directory (non-recursive: anything that appeared in it is a conflict), or a made one. */
  async function commitDirectory(step: Step, path: string, what: string, signal: AbortSignal | undefined, force: boolean): Promise<StepOutcome> {
    const key = step.key;
    const target = await lowerTarget(key, what, signal);
    if (!('targetKey' in target)) return { ...target, path };
    if (step.op === 'rmdir') {
      if (!state.opaque.has(key)) return 'committed';
      let overwritten = false;
      try {
        await lower.rmdir(target, { signal });
      } catch (err) {
        if (isFsError(err, 'FS_ABORTED')) throw err;
        if (!isFsError(err, 'FS_NOT_FOUND')) {
          if (!isFsError(err, 'FS_NOT_EMPTY') && !isFsError(err, 'FS_NOT_DIRECTORY')) throw err;
          const now = await lowerStat(lower, target, signal);
          const found = now === undefined ? 'nothing' : now.type === 'directory' ? 'a directory that is not empty' : `a ${now.type}`;
          if (!force) {
            const why = now?.type === 'directory' ? await removalBlocked(key, signal) : `found ${found}`;
            // Nothing new below: what is left is the overlay's own removals or moves that did not go through.
            if (why === undefined) {
              return conflict(path, `${what}: files below it whose removal or move was not committed (see their own results) are still in the lower; the lower was not changed`);
            }
            return conflict(path, `${what}: the lower changed since the overlay removed this directory (${why}); the lower was not changed`);
          }
          if (now?.type === 'directory') await lower.rmdir(target, { recursive: true, signal });
          else if (now !== undefined) await lower.remove(target, undefined, { signal });
          overwritten = true;
        }
      }
      await state.apply({ dropOpaque: [key] });
      return overwritten ? 'overwritten' : 'committed';
    }
    if (!state.dirs.has(key) || state.opaque.has(key)) return 'committed';
    let overwritten = false;
    try {
      await lower.mkdir(target, { signal });
    } catch (err) {
      if (isFsError(err, 'FS_ABORTED')) throw err;
      const now = await lowerStat(lower, target, signal);
      if (!isFsError(err, 'FS_NOT_DIRECTORY') || now === undefined) throw err;
      if (!force) return conflict(path, `${what}: the lower now has a ${now.type} there; the lower was not changed`);
      await lower.remove(target, undefined, { signal });
      await lower.mkdir(target, { signal });
      overwritten = true;
    }
    if (!hasUpperDescendant(state, key)) await state.apply({ dropDirs: [key] });
    return overwritten ? 'overwritten' : 'committed';
  }

  async function publish(target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined, batch?: Batch): Promise<void> {
    if (entry.kind === 'file') {
      const intent = entry.base === undefined ? ({ kind: 'createIfAbsent' } as const) : ({ kind: 'replaceIfVersion', version: entry.base } as const);
      await lower.writeBytes(target, entry.bytes, intent, writeOptions(signal, batch));
      await publishMode(lower, target, entry, signal);
    } else if (entry.base !== undefined) {
      await lower.remove(target, { kind: 'replaceIfVersion', version: entry.base }, { signal });
    } else if ((await lowerStat(lower, target, signal)) !== undefined) {
      // Removed here after it was created here; the lower's file appeared underneath.
      throw new FsError('FS_STALE_VERSION', 'the lower has a file the overlay never saw');
    }
  }

  /** The forced commit of a conflicting path: no guard, whatever the lower holds now. */
  async function overwrite(target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined, batch?: Batch): Promise<void> {
    if (entry.kind === 'file') {
      await lower.writeBytes(target, entry.bytes, undefined, writeOptions(signal, batch));
      await publishMode(lower, target, entry, signal);
    }
    else if ((await lowerStat(lower, target, signal)) !== undefined) await lower.remove(target, undefined, { signal });
  }

  async function lowerAsBase(target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<boolean> {
    const now = await lowerStat(lower, target, signal);
    return entry.base === undefined ? now === undefined : now?.type === 'file' && now.version === entry.base;
  }

  async function lowerHolds(target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<boolean> {
    if (entry.kind !== 'file') return (await lowerStat(lower, target, signal)) === undefined;
    const now = await lowerIfSame(lower, target, entry.bytes, signal);
    return now !== undefined && bytesEqual(now.bytes, entry.bytes);
  }

  async function conflictMessage(what: string, target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<string> {
    const now = await lowerStat(lower, target, signal).catch(() => undefined);
    const found = now === undefined ? 'no file' : now.type === 'file' ? `version ${now.version}` : `a ${now.type}`;
    const expected = entry.base === undefined ? 'no file' : `version ${entry.base}`;
    return `${what}: the lower changed since the overlay first saw it at "${target.targetKey}" (expected ${expected}, found ${found}); the lower was not changed`;
  }

  /**
   * For each change whose path lies below a lower non-directory the overlay did not remove (a file
   * that appeared underneath where the view has a directory): that ancestor. One stat per distinct
   * ancestor, top down, stopping where the lower has nothing.
   */
  async function nonDirectoriesAbove(
    todo: readonly OverlayChange[],
    signal: AbortSignal | undefined,
  ): Promise<Map<string, { key: string; type: string }>> {
    type Seen = 'directory' | 'nothing' | { key: string; type: string };
    const found = new Map<string, { key: string; type: string }>();
    const seen = new Map<string, Seen>();
    const check = async (dir: string): Promise<Seen> => {
      // The lower's root and what lies above it are not the overlay's to check.
      if (dir === rootKey || !isWithin(rootKey, dir)) return 'directory';
      const known = seen.get(dir);
      if (known !== undefined) return known;
      const up = await check(posix.dirname(dir));
      let here: Seen = up;
      // A whiteout here is the overlay's own removal (its step runs first); below a removed
      // directory, what appeared is that directory's conflict.
      if (up === 'directory') {
        if (state.entries.get(dir)?.kind === 'whiteout' || isHidden(state, dir)) here = 'nothing';
        else {
          const info = await lowerStat(lower, pathTarget(dir), signal);
          here = info === undefined ? 'nothing' : info.type === 'directory' ? 'directory' : { key: dir, type: info.type };
        }
      }
      seen.set(dir, here);
      return here;
    };
    for (const c of todo) {
      if (c.kind === 'deleted') continue;
      const blocker = await check(posix.dirname(c.path));
      if (typeof blocker === 'object') found.set(c.path, blocker);
    }
    return found;
  }

  /** Why the lower's directory cannot simply go (something the overlay never saw), or undefined. */
  async function removalBlocked(dir: string, signal: AbortSignal | undefined): Promise<string | undefined> {
    const info = await lowerStat(lower, pathTarget(dir), signal);
    if (info === undefined) return undefined;
    if (info.type !== 'directory') return `found a ${info.type} there`;
    for await (const e of lower.walk(pathTarget(dir), { signal })) {
      const key = posix.join(dir, e.path);
      if (e.target.targetKey !== key || e.type === 'other') return `"${key}" is a symlink or special file`;
      if (e.type === 'directory') {
        if (!state.opaque.has(key)) return `the directory "${key}" appeared`;
        continue;
      }
      const entry = state.entries.get(key);
      if (entry?.base === undefined) return `"${key}" appeared`;
      const now = await lowerStat(lower, pathTarget(key), signal);
      if (now?.version !== entry.base) return `"${key}" changed`;
    }
    return undefined;
  }

  /**
   * The changes a commit of `roots` takes: those selected, plus (until nothing is added) the other
   * end of a selected rename and a removed directory above anything that appears in it, which
   * must reach the lower first.
   */
  function commitSelection(all: OverlayChange[], roots: string[] | undefined): OverlayChange[] {
    if (roots === undefined) return all;
    const grown = [...roots];
    for (let added = true; added; ) {
      added = false;
      const add = (key: string) => {
        if (!within(grown, key)) {
          grown.push(key);
          added = true;
        }
      };
      for (const c of all) {
        if (!picks(grown, c)) continue;
        if (c.from !== undefined) add(c.from);
        add(c.path);
        if (c.kind !== 'deleted') {
          const top = topRemovedAbove(c.path, c.type === 'directory');
          if (top !== undefined) add(top);
        }
      }
    }
    return all.filter((c) => picks(grown, c));
  }

  /** The outermost removed lower directory above `key` (or at it, when `self`). */
  function topRemovedAbove(key: string, self: boolean): string | undefined {
    let top: string | undefined;
    for (let d = self ? key : posix.dirname(key); ; d = posix.dirname(d)) {
      if (state.opaque.has(d)) top = d;
      if (d === '/' || d === '.') return top;
    }
  }

  async function commit(paths?: readonly string[], options: OverlayCommitOptions = {}): Promise<OverlayCommitResult> {
    const { signal, onProgress } = options;
    const force = options.force === true;
    const todo = commitSelection(allChanges(), await selectionRoots(paths, signal));
    const steps = orderSteps(todo.flatMap((c, i) => stepsOf(c, i)));
    const remaining = todo.map((_, i) => steps.filter((s) => s.change === i).length);
    const outcomes: (StepOutcome | undefined)[] = todo.map(() => undefined);
    let index = 0;
    const finish = (i: number) => {
      const outcome = outcomes[i] ?? 'committed';
      outcomes[i] = outcome;
      index++;
      if (!onProgress) return;
      const kind = typeof outcome === 'string' ? 'committed' : outcome.code === 'FS_CONFLICT' ? 'conflict' : 'failed';
      try {
        onProgress({ path: todo[i]!.path, index, total: todo.length, outcome: kind });
      } catch (err) {
        throw toFsError(err, 'commit stopped by its progress callback');
      }
    };
    // A removed directory whose lower gained or changed something below is a conflict before any
    // step runs, and so is what would appear inside it: no step of theirs touches the lower.
    if (!force) {
      for (const [i, c] of todo.entries()) {
        if (c.type !== 'directory' || c.kind === 'added') continue;
        const why = await removalBlocked(c.path, signal);
        if (why === undefined) continue;
        outcomes[i] = conflict(c.path, `cannot commit "${c.path}": the lower changed since the overlay removed this directory (${why}); the lower was not changed`);
        todo.forEach((d, j) => {
          const inside = d.path.startsWith(`${c.path}/`) || (d.path === c.path && d.type === 'file');
          if (j !== i && d.kind !== 'deleted' && inside && outcomes[j] === undefined) {
            outcomes[j] = conflict(d.path, `cannot commit "${d.path}": it lies in the removed directory "${c.path}", whose removal conflicts`);
          }
        });
      }
    }
    // Where the view has a directory and the lower now has a file (or another non-directory) the
    // overlay never saw, nothing below can be published: those changes conflict before any step
    // runs, and so do removed directories whose files were moving there (their removal waits).
    const blockedAbove = await nonDirectoriesAbove(todo, signal);
    const waiting: string[] = [];
    for (const [i, c] of todo.entries()) {
      const above = blockedAbove.get(c.path);
      if (above === undefined || c.kind === 'deleted' || outcomes[i] !== undefined) continue;
      outcomes[i] = conflict(
        c.path,
        `cannot commit "${c.path}": the lower now has a ${above.type} at "${above.key}", where the overlay has a directory; the lower was not changed`,
      );
      // A source already gone from the lower holds nothing back.
      if (c.from !== undefined && (await lowerStat(lower, pathTarget(c.from), signal)) !== undefined) waiting.push(c.from);
    }
    todo.forEach((c, i) => {
      if (c.type !== 'directory' || c.kind === 'added' || outcomes[i] !== undefined) return;
      const moved = waiting.find((from) => from.startsWith(c.path === '/' ? '/' : `${c.path}/`));
      if (moved === undefined) return;
      outcomes[i] = conflict(c.path, `cannot commit "${c.path}": "${moved}" below it was moved to a path that conflicts, so the directory stays; the lower was not changed`);
    });
    for (let i = 0; i < todo.length; i++) if (remaining[i] === 0 || outcomes[i] !== undefined) finish(i);
    /** Runs a step; returns the change to report as finished, if this step finished it. */
    // Sources of moves that did not go through and are still in the lower, known once the
    // creations start: nothing is created at or below one (it would half-do the move).
    let stuck: Map<string, string> | undefined;
    const stuckSources = async () => {
      const found = new Map<string, string>();
      for (const [i, c] of todo.entries()) {
        if (c.from === undefined || typeof outcomes[i] !== 'object') continue;
        if ((await lowerStat(lower, pathTarget(c.from), signal)) !== undefined) found.set(c.from, c.path);
      }
      return found;
    };
    const run = async (step: Step, batch?: Batch): Promise<number | undefined> => {
      throwIfAborted(signal, 'commit');
      const i = step.change;
      // An earlier step of this change failed: the change stops there (and was reported).
      if (typeof outcomes[i] === 'object') return undefined;
      if (step.phase === 2) {
        stuck ??= await stuckSources();
        for (let k = step.key; stuck.size > 0 && isWithin(rootKey, k) && k !== '/'; k = posix.dirname(k)) {
          const to = stuck.get(k);
          if (to === undefined) continue;
          outcomes[i] = conflict(todo[i]!.path, `cannot commit "${todo[i]!.path}": the lower still has "${k}", whose move to "${to}" was not committed; the lower was not changed`);
          return i;
        }
      }
      const outcome = await runStep(step, todo[i]!, signal, force, batch);
      if (typeof outcome === 'object' || outcome === 'overwritten' || outcomes[i] === undefined) outcomes[i] = outcome;
      return typeof outcome === 'object' || --remaining[i]! === 0 ? i : undefined;
    };
    // Renames, removals and directories one by one, in order; then the files, which depend on
    // nothing but their own path, several at once with deferred durability (F1) when the lower
    // can flush: every directory is flushed once, and only then are they dropped from the upper.
    const batched = lower.flush !== undefined;
    const files = batched ? steps.filter((s) => s.phase === 2 && s.op === 'write') : [];
    const inBatch = new Set(files);
    for (const step of steps) {
      if (inBatch.has(step)) continue;
      const done = await run(step);
      if (done !== undefined) finish(done);
    }
    if (files.length > 0) {
      const batch: Batch = { dirs: new Set(), settle: [] };
      // Progress in step order, as without the batch: a file done early waits for those before it.
      const finished: (number | undefined | null)[] = files.map(() => null);
      let reported = 0;
      // After a failure no file starts, and those under way finish first: none outlives the commit.
      let failure: { err: unknown } | undefined;
      await forEachBounded(files, COMMIT_CONCURRENCY, async (step, k) => {
        finished[k] = await run(step, batch);
        for (; reported < files.length && finished[reported] !== null; reported++) {
          const i = finished[reported];
          if (i !== undefined && i !== null) finish(i);
        }
      }).catch((err: unknown) => (failure = { err }));
      // Even after an abort: what was published is flushed and leaves the upper.
      await settle(batch, outcomes);
      if (failure !== undefined) throw failure.err;
    }
    const result: OverlayCommitResult = { committed: [], overwritten: [], conflicts: [], failed: [] };
    todo.forEach((c, i) => {
      const outcome = outcomes[i]!;
      if (outcome === 'committed' || outcome === 'overwritten') result.committed.push(c.path);
      if (outcome === 'overwritten') result.overwritten.push(c.path);
      else if (typeof outcome !== 'string') (outcome.code === 'FS_CONFLICT' ? result.conflicts : result.failed).push(outcome);
    });
    // Directories the overlay made that now exist below are no longer the overlay's to keep.
    await lock.run(TREE_LOCK, async () => {
      const drop: string[] = [];
      for (const dir of state.dirs) {
        if (holdsFiles(dir) || state.opaque.has(dir) || isHidden(state, dir)) continue;
        if ((await lowerStat(lower, pathTarget(dir), signal))?.type === 'directory') drop.push(dir);
      }
      if (drop.length > 0) await state.apply({ dropDirs: drop });
    });
    return result;
  }

  /** Flushes a batch's directories, then drops its files from the upper (unless changed meanwhile). */
  async function settle(batch: Batch, outcomes: (StepOutcome | undefined)[]): Promise<void> {
    if (batch.settle.length === 0) return;
    try {
      // Not abortable: what was published must become durable and leave the upper, or stay in it.
      await lower.flush!([...batch.dirs].map(pathTarget));
    } catch (err) {
      // Published but perhaps not durable: the upper keeps them, so a later commit finds them
      // already in the lower (or publishes them again); nothing is lost either way.
      const e = toFsError(err, 'cannot flush the committed files to disk');
      for (const [key, , , i] of batch.settle) {
        outcomes[i] = { path: key, code: e.code, message: `cannot commit "${key}": it was written, but ${e.message}; the overlay keeps it` };
      }
      return;
    }
    // Concurrently, so a persistent upper saves them together.
    await Promise.all(
      batch.settle.map(([key, published, done, i]) =>
        lock
          .run(key, () => (state.entries.get(key) === published ? state.apply({ entries: [[key, done]] }) : undefined))
          .catch((err: unknown) => {
            const e = toFsError(err, `cannot commit "${key}"`);
            outcomes[i] = { path: key, code: e.code, message: e.message };
          }),
      ),
    );
  }

  function writeOptions(signal: AbortSignal | undefined, batch: Batch | undefined): FsWriteOptions {
    return batch ? { signal, durability: 'deferred' } : { signal };
  }

  async function discard(paths?: readonly string[], options: FsOpOptions = {}): Promise<void> {
    const roots = await selectionRoots(paths, options.signal);
    // A rename goes back as a whole: both its names are discarded.
    const grown = roots && [...roots];
    if (grown) for (const c of allChanges()) if (c.from !== undefined && picks(roots, c)) grown.push(c.path, c.from);
    const selected = (key: string) => within(grown, key);
    const keys = [...state.entries.keys()].filter(selected);
    // Concurrently, so a persistent upper saves them as one state document.
    await settleAll(keys.map((key) => lock.run(key, () => state.apply({ entries: [[key, undefined]] }))));
    await lock.run(TREE_LOCK, async () => {
      // Directories the overlay made or removed at or beneath the selection go too; those above it stay.
      const drop = [...state.dirs].filter((dir) => selected(dir) && !holdsFiles(dir));
      const dropOpaque = [...state.opaque].filter(selected);
      if (drop.length > 0 || dropOpaque.length > 0) await state.apply({ dropDirs: drop, dropOpaque });
    });
    if (paths === undefined) await state.sweep();
  }

  function holdsFiles(dir: string): boolean {
    return state.hasFileBelow(dir);
  }

  return { changes, diff, commit, discard };
}


function displayName(rootKey: string, key: string): string {
  const rel = posix.relative(rootKey, key);
  // `..x` is a name inside the root; only `..` and `../…` lead out.
  return rel === '' || rel === '..' || rel.startsWith('../') ? key.replace(/^\/+/, '') : rel;
}
