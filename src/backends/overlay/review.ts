import { posix } from 'node:path';
import { OMIT_HEADERS, formatPatch, structuredPatch } from 'diff';
import {
  FsError,
  compareNames,
  isFsError,
  isWithin,
  textProblem,
  throwIfAborted,
  toFsError,
  type FileSystem,
  type FsErrorCode,
  type FsOpOptions,
  type FsTarget,
  type FsVersion,
} from '../../seam/index.js';
import { TREE_LOCK, bytesEqual, lowerFile, lowerIfSame, lowerStat, pathTarget, type OverlayCore } from './provider.js';
import type { UpperEntry } from './state.js';

export type OverlayChangeKind = 'added' | 'modified' | 'deleted';

export interface OverlayChange {
  /** The file's canonical path (its target key in the lower). */
  readonly path: string;
  readonly kind: OverlayChangeKind;
  /**
   * The lower's version when the overlay first changed this path; undefined when the lower had
   * no file there. Commit writes only if the lower still has this version.
   */
  readonly baseVersion: FsVersion | undefined;
  /** The overlay's version of the file (added and modified). */
  readonly version?: FsVersion;
  readonly size?: number;
}

export interface OverlayCommitProblem {
  readonly path: string;
  readonly code: FsErrorCode;
  readonly message: string;
}

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

export function createReview(core: OverlayCore, view: FileSystem) {
  const { lower, state, rootKey, lock } = core;

  /** Keys selected by `paths`: each path selects itself and everything beneath it. */
  async function selector(paths: readonly string[] | undefined, signal: AbortSignal | undefined) {
    if (paths === undefined) return () => true;
    if (!Array.isArray(paths)) throw new FsError('FS_INVALID_ARGUMENT', 'paths must be an array of strings');
    const roots: string[] = [];
    for (const p of paths) roots.push((await view.resolve(p, { signal })).targetKey);
    return (key: string) => roots.some((r) => isWithin(r, key));
  }

  function describe(key: string, entry: UpperEntry): OverlayChange {
    if (entry.kind === 'whiteout') return { path: key, kind: 'deleted', baseVersion: entry.base };
    return {
      path: key,
      kind: entry.base === undefined ? 'added' : 'modified',
      baseVersion: entry.base,
      version: entry.version,
      size: entry.bytes.byteLength,
    };
  }

  async function changes(paths?: readonly string[], options: FsOpOptions = {}): Promise<OverlayChange[]> {
    const selected = await selector(paths, options.signal);
    return [...state.entries]
      .filter(([key]) => selected(key))
      .sort(([a], [b]) => compareNames(a, b))
      .map(([key, entry]) => describe(key, entry));
  }

  async function diff(paths?: readonly string[], options: FsOpOptions = {}): Promise<string> {
    const signal = options.signal;
    let out = '';
    for (const change of await changes(paths, options)) {
      throwIfAborted(signal, 'cannot diff the overlay');
      const entry = state.entries.get(change.path);
      if (!entry) continue;
      let before: Uint8Array | undefined;
      try {
        before = (await lowerFile(lower, pathTarget(change.path), `cannot diff "${change.path}"`, signal))?.bytes;
      } catch (err) {
        if (!isFsError(err, 'FS_NOT_REGULAR_FILE')) throw err;
      }
      out += fileDiff(displayName(rootKey, change.path), before, entry.kind === 'file' ? entry.bytes : undefined);
    }
    return out;
  }

  async function commitOne(
    key: string,
    signal: AbortSignal | undefined,
    force: boolean,
  ): Promise<OverlayCommitProblem | 'committed' | 'overwritten' | undefined> {
    return lock.run(key, async () => {
      const entry = state.entries.get(key);
      if (!entry) return undefined;
      const what = `cannot commit "${key}"`;
      try {
        const target = await lower.resolve(key, { signal });
        if (target.targetKey !== key) {
          return conflict(key, `${what}: the path now leads to "${target.targetKey}" in the lower layer`);
        }
        let overwritten = false;
        try {
          await publish(target, entry, signal);
        } catch (err) {
          if (isFsError(err, 'FS_ABORTED')) throw err;
          // Not a conflict when the lower is still as the overlay first saw it (e.g. a parent is a file).
          if (!isFsError(err, 'FS_STALE_VERSION') && !isFsError(err, 'FS_NOT_OBSERVED') && (await lowerAsBase(target, entry, signal))) {
            throw err;
          }
          // Someone already made the lower what the overlay wants: nothing to overwrite, nothing lost.
          if (!(await lowerHolds(target, entry, signal))) {
            if (!force) return conflict(key, await conflictMessage(what, target, entry, signal));
            await overwrite(target, entry, signal);
            overwritten = true;
          }
        }
        await state.apply({ entries: [[key, undefined]] });
        return overwritten ? ('overwritten' as const) : ('committed' as const);
      } catch (err) {
        const e = toFsError(err, what);
        if (e.code === 'FS_ABORTED') throw e;
        return { path: key, code: e.code, message: e.message };
      }
    });
  }

  async function publish(target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<void> {
    if (entry.kind === 'file') {
      const intent = entry.base === undefined ? ({ kind: 'createIfAbsent' } as const) : ({ kind: 'replaceIfVersion', version: entry.base } as const);
      await lower.writeBytes(target, entry.bytes, intent, { signal });
    } else if (entry.base !== undefined) {
      await lower.remove(target, { kind: 'replaceIfVersion', version: entry.base }, { signal });
    } else if ((await lowerStat(lower, target, signal)) !== undefined) {
      // Removed here after it was created here; the lower's file appeared underneath.
      throw new FsError('FS_STALE_VERSION', 'the lower has a file the overlay never saw');
    }
  }

  /** The forced commit of a conflicting path: no guard, whatever the lower holds now. */
  async function overwrite(target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<void> {
    if (entry.kind === 'file') await lower.writeBytes(target, entry.bytes, undefined, { signal });
    else if ((await lowerStat(lower, target, signal)) !== undefined) await lower.remove(target, undefined, { signal });
  }

  async function lowerAsBase(target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<boolean> {
    const now = await lowerStat(lower, target, signal);
    return entry.base === undefined ? now === undefined : now?.type === 'file' && now.version === entry.base;
  }

  async function lowerHolds(target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<boolean> {
    if (entry.kind === 'whiteout') return (await lowerStat(lower, target, signal)) === undefined;
    const now = await lowerIfSame(lower, target, entry.bytes, signal);
    return now !== undefined && bytesEqual(now.bytes, entry.bytes);
  }

  async function conflictMessage(what: string, target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<string> {
    const now = await lowerStat(lower, target, signal).catch(() => undefined);
    const found = now === undefined ? 'no file' : now.type === 'file' ? `version ${now.version}` : `a ${now.type}`;
    const expected = entry.base === undefined ? 'no file' : `version ${entry.base}`;
    return `${what}: the lower changed since the overlay first saw it (expected ${expected}, found ${found}); the lower was not changed`;
  }

  async function commit(paths?: readonly string[], options: OverlayCommitOptions = {}): Promise<OverlayCommitResult> {
    const { signal, onProgress } = options;
    const force = options.force === true;
    // Path order puts a removed file before anything created beneath it (a file replaced by a directory).
    const todo = await changes(paths, { signal });
    const result: OverlayCommitResult = { committed: [], overwritten: [], conflicts: [], failed: [] };
    let index = 0;
    for (const change of todo) {
      throwIfAborted(signal, 'commit');
      const outcome = await commitOne(change.path, signal, force);
      index++;
      if (outcome === undefined) continue;
      const done = outcome === 'committed' || outcome === 'overwritten';
      if (done) result.committed.push(change.path);
      if (outcome === 'overwritten') result.overwritten.push(change.path);
      else if (!done && outcome.code === 'FS_CONFLICT') result.conflicts.push(outcome);
      else if (!done) result.failed.push(outcome);
      if (onProgress) {
        const kind = done ? 'committed' : outcome.code === 'FS_CONFLICT' ? 'conflict' : 'failed';
        try {
          onProgress({ path: change.path, index, total: todo.length, outcome: kind });
        } catch (err) {
          throw toFsError(err, 'commit stopped by its progress callback');
        }
      }
    }
    // Directories the overlay made that now exist below are no longer the overlay's to keep.
    await lock.run(TREE_LOCK, async () => {
      const drop: string[] = [];
      for (const dir of state.dirs) {
        if (holdsFiles(dir)) continue;
        if ((await lowerStat(lower, pathTarget(dir), signal))?.type === 'directory') drop.push(dir);
      }
      if (drop.length > 0) await state.apply({ dropDirs: drop });
    });
    return result;
  }

  async function discard(paths?: readonly string[], options: FsOpOptions = {}): Promise<void> {
    const selected = await selector(paths, options.signal);
    const keys = [...state.entries.keys()].filter(selected);
    // Concurrently, so a persistent upper saves them as one state document.
    await Promise.all(keys.map((key) => lock.run(key, () => state.apply({ entries: [[key, undefined]] }))));
    await lock.run(TREE_LOCK, async () => {
      // Directories the overlay made at or beneath the selection go too; those above it stay.
      const drop = [...state.dirs].filter((dir) => selected(dir) && !holdsFiles(dir));
      if (drop.length > 0) await state.apply({ dropDirs: drop });
    });
    if (paths === undefined) await state.sweep();
  }

  function holdsFiles(dir: string): boolean {
    const prefix = dir === '/' ? '/' : `${dir}/`;
    for (const [key, entry] of state.entries) if (entry.kind === 'file' && key.startsWith(prefix)) return true;
    return false;
  }

  return { changes, diff, commit, discard };
}

function conflict(path: string, message: string): OverlayCommitProblem {
  return { path, code: 'FS_CONFLICT', message };
}

function displayName(rootKey: string, key: string): string {
  const rel = posix.relative(rootKey, key);
  // `..x` is a name inside the root; only `..` and `../…` lead out.
  return rel === '' || rel === '..' || rel.startsWith('../') ? key.replace(/^\/+/, '') : rel;
}

const keepBom = new TextDecoder('utf-8', { ignoreBOM: true });

/** One file's part of a git-style unified diff; empty when the bytes are the same. */
export function fileDiff(name: string, before: Uint8Array | undefined, after: Uint8Array | undefined): string {
  if (before === undefined && after === undefined) return '';
  if (before !== undefined && after !== undefined && bytesEqual(before, after)) return '';
  const a = `a/${name}`;
  const b = `b/${name}`;
  let out = `diff --git ${a} ${b}\n`;
  // Modes are not part of the contract; new and removed files are shown as regular files.
  if (before === undefined) out += 'new file mode 100644\n';
  if (after === undefined) out += 'deleted file mode 100644\n';
  const from = before === undefined ? '/dev/null' : a;
  const to = after === undefined ? '/dev/null' : b;
  const empty = new Uint8Array();
  // The seam's own definition of text (T1): what it would refuse to read is binary here.
  if (textProblem(before ?? empty) !== undefined || textProblem(after ?? empty) !== undefined) {
    return `${out}Binary files ${from} and ${to} differ\n`;
  }
  const patch = structuredPatch(from, to, keepBom.decode(before ?? empty), keepBom.decode(after ?? empty), undefined, undefined, {
    context: 3,
  });
  if (patch.hunks.length === 0) return out;
  return `${out}--- ${from}\n+++ ${to}\n${formatPatch(patch, OMIT_HEADERS)}`;
}
