import { FsError, throwIfAborted, toFsError } from './errors.js';
import type { KeyedMutex } from './lock.js';
import { describeType } from './path.js';
import { checkWriteIntent } from './resolve.js';
import type { QuotaGuard } from './quota.js';
import type { RootGuard } from './root.js';
import type {
  FileSystem,
  FsBatchResult,
  FsBatchSwap,
  FsChange,
  FsChangesOutcome,
  FsObservation,
  FsOpOptions,
  FsProvider,
  FsTarget,
  FsVersion,
} from './types.js';

// B1: guarded changes to many files, all or nothing. With a provider's `applyBatch` the seam holds
// every target's lock and the provider publishes in one atomic step; without it the changes are
// made one by one through the filesystem and undone newest first when one fails.

/** Whole files, whatever their size: an undo must restore exactly what was there. */
const WHOLE = Number.MAX_SAFE_INTEGER;

export interface BatchDeps {
  readonly provider: FsProvider;
  readonly locks: KeyedMutex;
  readonly rootGuard: RootGuard;
  /** Under a quota: the changes made one by one are checked as a whole first. */
  readonly quota?: QuotaGuard | undefined;
  readonly checkTarget: (target: unknown) => void;
  /** The filesystem the fallback writes through. */
  readonly fs: () => FileSystem;
}

export function createApplyChanges(deps: BatchDeps): (changes: readonly FsChange[], options?: FsOpOptions) => Promise<FsChangesOutcome> {
  return async (changes, options) => {
    const what = 'cannot apply the changes';
    const signal = options?.signal;
    throwIfAborted(signal, what);
    const keys = checkChanges(changes, deps.checkTarget);
    if (changes.length === 0) return { versions: [] };
    try {
      const leaving = changes.flatMap((c) => (c.kind === 'remove' ? [c.target] : c.kind === 'move' ? [c.from, c.to] : []));
      await deps.rootGuard.refuse(what, 'the root cannot be removed, moved or replaced', ...leaving);
    } catch (err) {
      throw toFsError(err, what);
    }
    const native = deps.provider.applyBatch?.bind(deps.provider);
    if (native === undefined) {
      const quota = deps.quota;
      if (quota === undefined) return applyWithRollback(deps.fs(), changes, options);
      try {
        return await quota.wholeChanges(changes, options ?? {}, () => applyWithRollback(deps.fs(), changes, options));
      } catch (err) {
        throw toFsError(err, what);
      }
    }
    try {
      return await lockAll(deps.locks, [...keys].sort(), async () => {
        const { swaps, owners } = toSwaps(changes);
        throwIfAborted(signal, what);
        const result = await native(swaps, { signal });
        return outcomeOf(result, swaps, owners, changes);
      });
    } catch (err) {
      throw toFsError(err, what);
    }
  };
}

/** Every change well formed, every target distinct; the keys to lock. */
function checkChanges(changes: readonly FsChange[], checkTarget: (t: unknown) => void): Set<string> {
  if (!Array.isArray(changes)) throw new FsError('FS_INVALID_ARGUMENT', `changes must be an array, got ${describeType(changes)}`);
  const keys = new Set<string>();
  const claim = (t: unknown) => {
    checkTarget(t);
    const { targetKey, displayPath } = t as FsTarget;
    if (keys.has(targetKey)) throw new FsError('FS_INVALID_ARGUMENT', `cannot apply the changes: "${displayPath}" is changed twice; make one change per file`);
    keys.add(targetKey);
  };
  const isVersion = (v: unknown) => typeof v === 'string' && v.length > 0;
  const bad = (i: number, why: string) => new FsError('FS_INVALID_ARGUMENT', `cannot apply the changes: change ${i + 1} ${why}`);
  changes.forEach((c: FsChange | null, i) => {
    if (typeof c !== 'object' || c === null) throw bad(i, `must be an object, got ${describeType(c)}`);
    if (c.kind === 'write') {
      claim(c.target);
      const intent = c.intent as { kind?: unknown; version?: unknown } | undefined;
      const guarded = intent?.kind === 'createIfAbsent' || (intent?.kind === 'replaceIfVersion' && isVersion(intent.version));
      if (!guarded) throw bad(i, 'needs an intent: createIfAbsent or replaceIfVersion');
    } else if (c.kind === 'remove') {
      claim(c.target);
      if (!isVersion(c.version)) throw bad(i, 'needs the version it removes');
    } else if (c.kind === 'move') {
      claim(c.from);
      claim(c.to);
      if (!isVersion(c.expect)) throw bad(i, 'needs the version it moves (expect)');
      if (c.replace !== false && !isVersion(c.replace)) throw bad(i, 'needs replace: false or the version it replaces');
    } else throw bad(i, `has an unknown kind ${JSON.stringify((c as { kind?: unknown }).kind)}`);
    if (c.kind !== 'remove' && !(c.bytes instanceof Uint8Array)) throw bad(i, `needs bytes as a Uint8Array, got ${describeType(c.bytes)}`);
  });
  return keys;
}

function lockAll<T>(locks: KeyedMutex, keys: readonly string[], fn: () => Promise<T>, i = 0): Promise<T> {
  return i >= keys.length ? fn() : locks.run(keys[i]!, () => lockAll(locks, keys, fn, i + 1));
}

const present = (version: FsVersion): FsObservation => ({ kind: 'present', version });

/** The provider's swaps, and for each the change it belongs to. A move is a removal and a write. */
function toSwaps(changes: readonly FsChange[]) {
  const swaps: FsBatchSwap[] = [];
  const owners: number[] = [];
  for (const [i, c] of changes.entries()) {
    if (c.kind === 'write') {
      const expect: FsObservation = c.intent.kind === 'createIfAbsent' ? { kind: 'absent' } : present(c.intent.version);
      swaps.push({ target: c.target, expect, bytes: new Uint8Array(c.bytes) });
      owners.push(i);
    } else if (c.kind === 'remove') {
      swaps.push({ target: c.target, expect: present(c.version), bytes: null });
      owners.push(i);
    } else {
      swaps.push({ target: c.from, expect: present(c.expect), bytes: null });
      const expect: FsObservation = c.replace === false ? { kind: 'absent' } : present(c.replace);
      swaps.push({ target: c.to, expect, bytes: new Uint8Array(c.bytes), from: c.from });
      owners.push(i, i);
    }
  }
  return { swaps, owners };
}

function outcomeOf(result: FsBatchResult, swaps: readonly FsBatchSwap[], owners: readonly number[], changes: readonly FsChange[]): FsChangesOutcome {
  if (result?.ok === true && Array.isArray(result.versions) && result.versions.length === swaps.length) {
    const versions: (FsVersion | undefined)[] = changes.map(() => undefined);
    result.versions.forEach((v, j) => {
      if (swaps[j]!.bytes !== null) versions[owners[j]!] = v;
    });
    if (versions.some((v, i) => changes[i]!.kind !== 'remove' && (typeof v !== 'string' || v.length === 0))) {
      throw new FsError('FS_IO_ERROR', "cannot apply the changes: the provider's batch returned no version for a write");
    }
    return { versions };
  }
  if (result?.ok !== false || !Number.isInteger(result.index) || swaps[result.index] === undefined) {
    throw new FsError('FS_IO_ERROR', `cannot apply the changes: the provider's batch returned ${JSON.stringify(result)}`);
  }
  const k = owners[result.index]!;
  const change = changes[k]!;
  const now = result.current.kind === 'present' ? result.current : undefined;
  const where = `"${nameOf(change)}" (file ${k + 1} of ${changes.length})`;
  try {
    guardHolds(change, swaps[result.index]!, now, `cannot apply the changes: ${where}`);
  } catch (err) {
    const error = toFsError(err, where);
    throw new FsError(error.code, `${error.message}; nothing was changed`, { cause: error });
  }
  throw new FsError('FS_IO_ERROR', `cannot apply the changes: the provider refused ${where} although its guard held; nothing was changed`);
}

/** Throws the error of a broken guard, as the single-file call would. */
function guardHolds(change: FsChange, swap: FsBatchSwap, now: { readonly version: FsVersion } | undefined, what: string): void {
  if (change.kind === 'write') return checkWriteIntent(change.intent, now, what);
  if (change.kind === 'remove') return checkWriteIntent({ kind: 'replaceIfVersion', version: change.version }, now, what);
  if (swap.bytes === null) {
    if (now === undefined) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
    if (now.version !== change.expect) throw new FsError('FS_STALE_VERSION', `${what}: the source changed since it was read`);
    return;
  }
  if (change.replace === false && now !== undefined) throw new FsError('FS_ALREADY_EXISTS', `${what}: the destination "${change.to.displayPath}" already exists`);
  if (change.replace !== false && now?.version !== change.replace) throw new FsError('FS_STALE_VERSION', `${what}: the destination "${change.to.displayPath}" changed since it was read`);
}

const nameOf = (c: FsChange) => (c.kind === 'move' ? c.from.displayPath : c.target.displayPath);

type Undo = { readonly path: string; run(): Promise<void> };

/** The bytes at `target`, which must be at `version` (else the guard's error). */
async function before(fs: FileSystem, target: FsTarget, version: FsVersion, what: string, opts: FsOpOptions): Promise<Uint8Array> {
  const now = await fs.readBytes(target, { maxBytes: WHOLE, ...opts }).catch((err: unknown) => {
    if (err instanceof FsError && err.code === 'FS_NOT_FOUND') return undefined;
    throw err;
  });
  checkWriteIntent({ kind: 'replaceIfVersion', version }, now, what);
  return now!.bytes;
}

/** Makes one change through `fs`; pushes an undo step as each part succeeds. */
async function applyOne(fs: FileSystem, c: FsChange, undo: Undo[], opts: FsOpOptions): Promise<FsVersion | undefined> {
  if (c.kind === 'remove') {
    const old = await before(fs, c.target, c.version, `cannot remove "${c.target.displayPath}"`, opts);
    await fs.remove(c.target, { kind: 'replaceIfVersion', version: c.version }, opts);
    // The bytes come back only where nothing new was created meanwhile.
    undo.push({ path: c.target.displayPath, run: async () => void (await fs.writeBytes(c.target, old, { kind: 'createIfAbsent' })) });
    return undefined;
  }
  let at = c.kind === 'move' ? c.to : c.target;
  let old: Uint8Array | undefined;
  if (c.kind === 'move') {
    const what = `cannot move "${c.from.displayPath}" to "${c.to.displayPath}"`;
    old = await before(fs, c.from, c.expect, what, opts);
    const replaced = c.replace === false ? undefined : await before(fs, c.to, c.replace, what, opts);
    await fs.rename(c.from, c.to, { expect: c.expect, replace: c.replace, ...opts });
    undo.push({
      path: c.from.displayPath,
      run: async () => {
        await fs.rename(c.to, c.from, { expect: c.expect, replace: false });
        if (replaced !== undefined) await fs.writeBytes(c.to, replaced, { kind: 'createIfAbsent' });
      },
    });
    at = c.to;
  } else if (c.intent.kind === 'replaceIfVersion') {
    old = await before(fs, c.target, c.intent.version, `cannot write "${c.target.displayPath}"`, opts);
  }
  const intent = c.kind === 'move' ? ({ kind: 'replaceIfVersion', version: c.expect } as const) : c.intent;
  const outcome = await fs.writeBytes(at, c.bytes, intent, opts);
  const written = { kind: 'replaceIfVersion', version: outcome.version } as const;
  undo.push({
    path: at.displayPath,
    run: async () => {
      if (old === undefined) await fs.remove(at, written);
      else await fs.writeBytes(at, old, written);
    },
  });
  return outcome.version;
}

/**
 * B1 without the provider's batch: each change made in turn under its guard; on a failure the
 * changes already made are undone newest first (each undo guarded by the version it undoes), and
 * the error names the file. Not crash-atomic: a process that dies part-way leaves the changes
 * already made. Also for a filesystem without `applyChanges`.
 */
export async function applyWithRollback(fs: FileSystem, changes: readonly FsChange[], options?: FsOpOptions): Promise<FsChangesOutcome> {
  const undo: Undo[] = [];
  const versions: (FsVersion | undefined)[] = [];
  const opts = options?.signal ? { signal: options.signal } : {};
  for (const change of changes) {
    try {
      versions.push(await applyOne(fs, change, undo, opts));
    } catch (err) {
      const error = toFsError(err, `cannot write "${nameOf(change)}"`);
      const left: string[] = [];
      // No signal: an abort must not stop the restoring.
      for (const step of undo.reverse()) {
        try {
          await step.run();
        } catch (undoErr) {
          left.push(`"${step.path}" (${toFsError(undoErr, 'undo failed').message})`);
        }
      }
      const done = versions.length;
      const where = `while writing "${nameOf(change)}" (file ${done + 1} of ${changes.length})`;
      const outcome =
        left.length === 0
          ? `nothing was changed${done > 0 ? ` (the ${done} file${done === 1 ? '' : 's'} already written ${done === 1 ? 'was' : 'were'} restored)` : ''}`
          : `the rollback failed, so these files may hold the new content: ${left.join(', ')}`;
      throw new FsError(error.code, `cannot apply the changes: failed ${where}: ${error.message}; ${outcome}`, { cause: error });
    }
  }
  return { versions };
}
