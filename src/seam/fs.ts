import { setImmediate } from 'node:timers';
import { FsError, throwIfAborted, toFsError } from './errors.js';
import { editBytes } from './edit.js';
import { KeyedMutex } from './lock.js';
import { createApplyChanges } from './batch.js';
import { createMutate, type SwapDone } from './mutate.js';
import { createSetExecutable } from './modes.js';
import { createLinkOps, resolveNoFollow } from './links.js';
import { RootGuard } from './root.js';
import { canonicalPath, describeType, isWithin, safeJson } from './path.js';
import { reservedNameCheck } from './reserved.js';
import { UNVERSIONED } from './types.js';
import {
  assertWritableText,
  checkText,
  crlfToLf,
  decodeText,
  decodeValidUtf8,
  textForWrite,
  validUtf8ChunkEnd,
} from './text.js';
import type {
  FileSystem,
  FsBytesRead,
  FsDirEntry,
  FsEditOutcome,
  FsEditRequest,
  FsInfo,
  FsListOptions,
  FsOpOptions,
  FsWriteOptions,
  FsProvider,
  FsRenameOptions,
  FsLinkRenameOptions,
  FsResolveOptions,
  FsRmdirOptions,
  FsTarget,
  FsTextRead,
  FsTextStream,
  FsVersion,
  FsWalkEntry,
  FsWalkOptions,
  FsStreamOptions,
  FsTextWriteOptions,
  FsWriteIntent,
  FsWriteOutcome,
} from './types.js';

export interface CreateFsOptions {
  /** Default directory for relative paths (default: the provider's cwd, else its root, else `/`). */
  readonly cwd?: string;
  /** Largest file readText/streamText/editText will load, in bytes (default 256 MiB). */
  readonly maxTextBytes?: number;
}

export const DEFAULT_MAX_TEXT_BYTES = 256 * 1024 * 1024;
/** Bytes of the file per streamText chunk. */
const STREAM_CHUNK = 64 * 1024;

/**
 * Turns a storage provider into the `ctx.fs` contract. All path rules (P1, lexical part of P2),
 * text rules (T1, L1–L5) and the edit engine (E1–E7) live here, once, for every provider.
 */
export function createFs(provider: FsProvider, options: CreateFsOptions = {}): FileSystem {
  const root = provider.root === undefined ? undefined : canonicalPath(provider.root, '/');
  const cwd = canonicalPath(options.cwd ?? provider.cwd ?? root ?? '/', '/');
  if (root !== undefined && !isWithin(root, cwd)) {
    throw new FsError('FS_OUTSIDE_ROOT', `cwd "${cwd}" is outside the root "${root}"`);
  }
  // Names the storage keeps for itself: no caller path, and no target, may name one.
  const reserved = reservedNameCheck(provider, root);
  reserved?.(cwd, cwd);
  const maxTextBytes = options.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES;
  // The per-target critical section of every mutation made through this filesystem.
  const locks = new KeyedMutex();
  const mutate = createMutate(provider, locks, maxTextBytes);
  const rootGuard = new RootGuard(provider, root ?? '/');
  const setExecutable = createSetExecutable(provider, locks);
  const links = createLinkOps(provider, locks);
  const applyChanges = createApplyChanges({ provider, locks, rootGuard, checkTarget: (t) => checkTarget(t), fs: () => fs });

  async function call<T>(what: string, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    throwIfAborted(signal, what);
    if (dueToYield()) {
      await yieldToTimers();
      throwIfAborted(signal, what);
    }
    try {
      return await fn();
    } catch (err) {
      throw toFsError(err, what);
    }
  }

  async function readChecked(target: FsTarget, verb: string, opts: FsOpOptions | undefined): Promise<FsTextRead> {
    checkTarget(target);
    const what = `cannot ${verb} "${target.displayPath}"`;
    const signal = opts?.signal;
    const current = await call(what, signal, () => provider.read(target, { maxBytes: maxTextBytes, signal }));
    throwIfAborted(signal, what);
    const { text, bom } = decodeText(current.bytes, what);
    return { text, bom, version: current.version, size: current.bytes.byteLength };
  }

  const fs: FileSystem = {
    cwd,
    ...(root === undefined ? {} : { root }),

    async resolve(path: string, opts?: FsResolveOptions): Promise<FsTarget> {
      const signal = opts?.signal;
      throwIfAborted(signal, 'cannot resolve path');
      const abs = canonicalPath(path, opts?.cwd === undefined ? cwd : canonicalPath(opts.cwd, cwd));
      if (root !== undefined && !isWithin(root, abs)) {
        throw new FsError('FS_OUTSIDE_ROOT', `path "${path}" resolves to "${abs}", which is outside the root "${root}"`);
      }
      reserved?.(abs, path);
      const noFollow = opts?.noFollow === true;
      const target = await call(`cannot resolve "${abs}"`, signal, () => (noFollow ? resolveNoFollow(provider, abs, signal) : provider.resolve(abs, { signal })));
      throwIfAborted(signal, `cannot resolve "${abs}"`); // a provider may finish without looking at the signal
      checkTarget(target);
      return target;
    },

    contains(parent: FsTarget, child: FsTarget): boolean {
      checkTarget(parent);
      checkTarget(child);
      return provider.contains ? provider.contains(parent, child) : isWithin(parent.targetKey, child.targetKey);
    },

    async stat(target: FsTarget, opts?: FsOpOptions): Promise<FsInfo | undefined> {
      checkTarget(target);
      const what = `cannot stat "${target.displayPath}"`;
      const info = await call(what, opts?.signal, () => provider.stat(target, { signal: opts?.signal }));
      throwIfAborted(opts?.signal, what);
      return info;
    },

    readText: (target, opts) => readChecked(target, 'read', opts),

    async streamText(target: FsTarget, opts?: FsStreamOptions): Promise<FsTextStream> {
      checkTarget(target);
      const what = `cannot read "${target.displayPath}"`;
      const signal = opts?.signal;
      const unversioned = opts?.unversioned === true;
      const current = await call(what, signal, () =>
        provider.read(target, { maxBytes: maxTextBytes, signal, ...(unversioned ? { unversioned } : {}) }),
      );
      throwIfAborted(signal, what);
      // Checked whole (T1) before the first chunk, then decoded a chunk at a time, so no string
      // of the whole file is ever built.
      const { body, bom } = checkText(current.bytes, what);
      const version = unversioned ? UNVERSIONED : current.version;
      return { version, bom, size: current.bytes.byteLength, chunks: textChunks(body, signal, what) };
    },

    async readBytes(target: FsTarget, opts: FsOpOptions & { maxBytes: number }): Promise<FsBytesRead> {
      checkTarget(target);
      const maxBytes = opts?.maxBytes;
      if (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes < 0) {
        throw new FsError('FS_INVALID_ARGUMENT', `maxBytes must be a non-negative integer, got ${String(maxBytes)}`);
      }
      const what = `cannot read "${target.displayPath}"`;
      const current = await call(what, opts.signal, () => provider.read(target, { maxBytes, signal: opts.signal }));
      throwIfAborted(opts.signal, what);
      return { bytes: current.bytes, version: current.version };
    },

    async listDir(target: FsTarget, opts?: FsListOptions) {
      checkTarget(target);
      const what = `cannot list "${target.displayPath}"`;
      const stats = opts?.stats ?? true;
      if (typeof stats !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `${what}: stats must be a boolean, got ${JSON.stringify(stats)}`);
      const entries = await call(what, opts?.signal, () => provider.listDir(target, { signal: opts?.signal, ...(stats ? {} : { stats }) }));
      throwIfAborted(opts?.signal, what);
      return entries;
    },

    async writeText(target: FsTarget, content: string, intent?: FsWriteIntent, opts?: FsTextWriteOptions): Promise<FsWriteOutcome> {
      checkTarget(target);
      assertWritableText(content, 'content');
      checkIntent(intent, true);
      const what = `cannot write "${target.displayPath}"`;
      let replaced: Uint8Array | null = null;
      let published: Uint8Array = new Uint8Array();
      // L4/L5 need the existing file's BOM and line-ending style, so this write reads it first.
      const done = await call(what, opts?.signal, () =>
        mutate(target, what, opts?.signal, intent, (current) => {
          replaced = current?.bytes ?? null;
          published = textForWrite(content, current?.bytes);
          return published;
        }),
      );
      const outcome = { operation: done.existed ? 'update' : 'create', version: writtenVersion(done, what), size: published.byteLength } as const;
      return withBytes(opts) ? { ...outcome, replaced, published } : outcome;
    },

    async writeBytes(target: FsTarget, bytes: Uint8Array, intent?: FsWriteIntent, opts?: FsWriteOptions): Promise<FsWriteOutcome> {
      checkTarget(target);
      if (!(bytes instanceof Uint8Array)) {
        throw new FsError('FS_INVALID_ARGUMENT', `bytes must be a Uint8Array, got ${describeType(bytes)}`);
      }
      checkIntent(intent, true);
      const what = `cannot write "${target.displayPath}"`;
      const copy = new Uint8Array(bytes);
      // Exact bytes depend on nothing the file holds: one swap, and the existing file is never read.
      const durability = durabilityOf(opts);
      const done = await call(what, opts?.signal, () => mutate(target, what, opts?.signal, intent, copy, durability));
      return { operation: done.existed ? 'update' : 'create', version: writtenVersion(done, what), size: copy.byteLength };
    },

    async editText(
      target: FsTarget,
      edit: FsEditRequest,
      guard?: { readonly version: FsVersion },
      opts?: FsTextWriteOptions,
    ): Promise<FsEditOutcome> {
      checkTarget(target);
      const request = checkEdit(edit);
      if (guard !== undefined) checkIntent({ kind: 'replaceIfVersion', version: guard?.version }, false);
      const what = `cannot edit "${target.displayPath}"`;
      const signal = opts?.signal;
      const bytesWanted = withBytes(opts);
      // A native edit does not hand back the bytes; asked for them, the seam edits itself.
      if (provider.editText && !bytesWanted) {
        const native = provider.editText.bind(provider);
        return call(what, signal, () => locks.run(target.targetKey, () => native(target, request, guard, { signal })));
      }
      let outcome: Omit<FsEditOutcome, 'version'> | undefined;
      const intent: FsWriteIntent | undefined = guard && { kind: 'replaceIfVersion', version: guard.version };
      const done = await call(what, signal, () =>
        mutate(target, what, signal, intent, (current) => {
          if (current === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
          const edited = editBytes(current.bytes, request, what);
          outcome = { replacements: edited.replacements, lines: edited.lines, ...(bytesWanted ? { replaced: current.bytes, published: edited.bytes } : {}) };
          return edited.bytes;
        }),
      );
      return { version: writtenVersion(done, what), ...outcome! };
    },

    async remove(target: FsTarget, intent?: FsWriteIntent, opts?: FsWriteOptions): Promise<void> {
      checkTarget(target);
      checkIntent(intent, false);
      const what = `cannot remove "${target.displayPath}"`;
      const durability = durabilityOf(opts);
      const done = await call(what, opts?.signal, async () => {
        await rootGuard.refuse(what, 'it is the root', target);
        return mutate(target, what, opts?.signal, intent, null, durability);
      });
      if (!done.existed) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    },

    async flush(directories: readonly FsTarget[], opts?: FsOpOptions): Promise<void> {
      if (!Array.isArray(directories)) throw new FsError('FS_INVALID_ARGUMENT', `directories must be an array of targets, got ${describeType(directories)}`);
      for (const d of directories) checkTarget(d);
      if (!provider.flush || directories.length === 0) return;
      const flush = provider.flush.bind(provider);
      await call('cannot flush to disk', opts?.signal, () => flush(directories, { signal: opts?.signal }));
    },

    applyChanges,

    async mkdir(target: FsTarget, opts?: FsOpOptions): Promise<void> {
      checkTarget(target);
      const what = `cannot create directory "${target.displayPath}"`;
      await call(what, opts?.signal, () => provider.mkdir(target, { signal: opts?.signal }));
    },

    async rmdir(target: FsTarget, opts?: FsRmdirOptions): Promise<void> {
      checkTarget(target);
      const recursive = opts?.recursive ?? false;
      if (typeof recursive !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `recursive must be a boolean, got ${describeType(recursive)}`);
      const what = `cannot remove directory "${target.displayPath}"`;
      await call(what, opts?.signal, async () => {
        await rootGuard.refuse(what, 'it is the root', target);
        return provider.rmdir(target, { recursive, signal: opts?.signal });
      });
    },

    async rename(from: FsTarget, to: FsTarget, opts?: FsRenameOptions): Promise<void> {
      checkTarget(from);
      checkTarget(to);
      const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
      const expect = opts?.expect;
      if (expect !== undefined) checkIntent({ kind: 'replaceIfVersion', version: expect }, false);
      const replace = opts?.replace ?? false;
      if (typeof replace !== 'boolean') checkIntent({ kind: 'replaceIfVersion', version: replace }, false);
      const signal = opts?.signal;
      // Both names are held, in one order, so two opposite renames cannot deadlock (one name: once).
      const [first, second] = [from.targetKey, to.targetKey].sort();
      const both = <T>(fn: () => Promise<T>) => (first === second ? locks.run(first!, fn) : locks.run(first!, () => locks.run(second!, fn)));
      await call(what, signal, async () => {
        await rootGuard.refuse(what, 'the root cannot be moved or replaced', from, to);
        if (from.targetKey !== to.targetKey && fs.contains(from, to)) {
          throw new FsError('FS_INVALID_ARGUMENT', `${what}: a directory cannot be moved inside itself`);
        }
        return both(async () => {
          if (from.targetKey !== to.targetKey) {
            return provider.rename(from, to, { ...(expect === undefined ? {} : { expect }), replace, signal });
          }
          // A move onto itself changes nothing, but its guard and existence still count.
          const info = await provider.stat(from, { signal });
          if (info === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
          if (expect !== undefined && info.version !== expect) throw new FsError('FS_STALE_VERSION', `${what}: the file changed since it was read`);
        });
      });
    },

    walk(target: FsTarget, opts?: FsWalkOptions): AsyncIterable<FsWalkEntry> {
      checkTarget(target);
      const what = `cannot walk "${target.displayPath}"`;
      const signal = opts?.signal;
      const hooks = walkHooks(opts);
      const native = provider.walk?.bind(provider);
      if (native === undefined) return guardedWalk(() => walkByListing(provider, target, signal, hooks), what, signal);
      const pruner = hooks.prune ? new Pruner(target, hooks.prune) : undefined;
      return guardedWalk(() => native(target, { signal, ...hooks, ...(pruner ? { prune: pruner.decide } : {}) }), what, signal, pruner);
    },

    async setExecutable(target: FsTarget, executable: boolean, opts?: FsOpOptions): Promise<void> {
      checkTarget(target);
      if (dueToYield()) await yieldToTimers();
      return setExecutable(target, executable, opts);
    },

    async symlink(target: FsTarget, linkText: string, opts?: FsOpOptions): Promise<void> {
      checkTarget(target);
      return links.symlink(target, linkText, opts);
    },

    async readlink(target: FsTarget, opts?: FsOpOptions): Promise<string> {
      checkTarget(target);
      return links.readlink(target, opts);
    },

    async removeLink(target: FsTarget, opts?: FsOpOptions): Promise<void> {
      checkTarget(target);
      await call(`cannot remove the link "${target.displayPath}"`, opts?.signal, () => rootGuard.refuse(`cannot remove the link "${target.displayPath}"`, 'it is the root', target));
      return links.removeLink(target, opts);
    },

    async renameLink(from: FsTarget, to: FsTarget, opts?: FsLinkRenameOptions): Promise<void> {
      checkTarget(from);
      checkTarget(to);
      const what = `cannot move the link "${from.displayPath}" to "${to.displayPath}"`;
      await call(what, opts?.signal, () => rootGuard.refuse(what, 'the root cannot be moved or replaced', from, to));
      return links.renameLink(from, to, opts);
    },
  };

  /** A target as resolve gives it; its key (a path, for a provider that reserves names) names nothing reserved. */
  function checkTarget(target: unknown): asserts target is FsTarget {
    checkTargetShape(target);
    reserved?.(target.targetKey, target.displayPath);
  }

  return fs;
}

function withBytes(opts: FsTextWriteOptions | undefined): boolean {
  const asked = opts?.withBytes;
  if (asked !== undefined && typeof asked !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `withBytes must be a boolean, got ${JSON.stringify(asked)}`);
  return asked === true;
}

function durabilityOf(opts: FsWriteOptions | undefined): 'deferred' | undefined {
  const d = opts?.durability;
  if (d === undefined || d === 'immediate') return undefined;
  if (d !== 'deferred') throw new FsError('FS_INVALID_ARGUMENT', `durability must be 'immediate' or 'deferred', got ${JSON.stringify(d)}`);
  return d;
}

function writtenVersion(result: SwapDone, what: string): FsVersion {
  if (typeof result.version !== 'string' || result.version.length === 0) {
    throw new FsError('FS_IO_ERROR', `${what}: the provider's swap returned no version`);
  }
  return result.version;
}

/** D4 for providers without `walk`: depth first over listDir, into real subdirectories only. */
function walkByListing(
  provider: FsProvider,
  top: FsTarget,
  signal: AbortSignal | undefined,
  hooks: Pick<FsWalkOptions, 'prune' | 'onUnreadable'> = {},
): AsyncGenerator<FsWalkEntry> {
  return depthFirst(top, (dir) => provider.listDir(dir, { signal }), hooks);
}

/**
 * The walk of D4 over any listing function: a directory's entries, each followed by the entries
 * of its real subdirectories (never a link's), with their paths below `top`. `list` is told
 * whether it lists `top` itself (which a provider may need to check further than a child), and the
 * listed directory's path below `top`.
 */
export async function* depthFirst(
  top: FsTarget,
  list: (dir: FsTarget, isTop: boolean, prefix: string) => Promise<FsDirEntry[]>,
  hooks: Pick<FsWalkOptions, 'prune' | 'onUnreadable'> = {},
): AsyncGenerator<FsWalkEntry> {
  const stack = [{ dir: top, prefix: '', entries: await list(top, true, ''), next: 0 }];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const entry = frame.entries[frame.next++];
    if (entry === undefined) {
      stack.pop();
      continue;
    }
    const path = frame.prefix === '' ? entry.name : `${frame.prefix}/${entry.name}`;
    const walked = { ...entry, path };
    yield walked;
    if (isRealSubdirectory(frame.dir, entry) && hooks.prune?.(walked) !== true) {
      const entries = await listOrSkip(() => list(entry.target, false, path), walked, hooks.onUnreadable);
      if (entries !== undefined) stack.push({ dir: entry.target, prefix: path, entries, next: 0 });
    }
  }
}

/** The walk hooks of `opts`, checked (a caller's bad option is an argument error, not a crash). */
function walkHooks(opts: FsWalkOptions | undefined): Pick<FsWalkOptions, 'prune' | 'onUnreadable' | 'wantsStats'> {
  const { prune, onUnreadable, wantsStats } = opts ?? {};
  for (const [name, hook] of [['prune', prune], ['onUnreadable', onUnreadable], ['wantsStats', wantsStats]] as const) {
    if (hook !== undefined && typeof hook !== 'function') throw new FsError('FS_INVALID_ARGUMENT', `walk: ${name} must be a function`);
  }
  return { ...(prune ? { prune } : {}), ...(onUnreadable ? { onUnreadable } : {}), ...(wantsStats ? { wantsStats } : {}) };
}

/**
 * A subdirectory's listing inside a walk, or undefined when it cannot be listed and the caller
 * asked to pass over such directories (an abort still fails the walk).
 */
export async function listOrSkip<T>(
  list: () => Promise<T>,
  entry: FsWalkEntry,
  onUnreadable: FsWalkOptions['onUnreadable'],
): Promise<T | undefined> {
  if (onUnreadable === undefined) return list();
  try {
    return await list();
  } catch (err) {
    const error = toFsError(err, `cannot list "${entry.target.displayPath}"`);
    if (error.code === 'FS_ABORTED') throw error;
    onUnreadable(entry, error);
    return undefined;
  }
}

/** A directory entry reached by its own name, not through a link (which could loop or repeat a subtree). */
export function isRealSubdirectory(dir: FsTarget, entry: FsDirEntry): boolean {
  if (entry.type !== 'directory') return false;
  const key = dir.targetKey;
  return entry.target.targetKey === (key.endsWith('/') ? `${key}${entry.name}` : `${key}/${entry.name}`);
}

/**
 * `prune` as the contract promises it over a provider's own walk, which may not honour it: the
 * caller is asked once per real subdirectory, and what lies below a pruned one is dropped.
 */
class Pruner {
  private readonly decided = new Map<string, boolean>();
  private readonly base: string;
  // Tree order puts a directory's descendants right after it, so one cut at a time suffices.
  private cut: string | undefined;

  constructor(
    top: FsTarget,
    private readonly prune: NonNullable<FsWalkOptions['prune']>,
  ) {
    this.base = top.targetKey.endsWith('/') ? top.targetKey : `${top.targetKey}/`;
  }

  /** The hook handed to the provider: the caller's answer, asked once. */
  readonly decide = (entry: FsWalkEntry): boolean => {
    let pruned = this.decided.get(entry.path);
    if (pruned === undefined) this.decided.set(entry.path, (pruned = this.prune(entry) === true));
    return pruned;
  };

  /** Below a pruned directory: not to be yielded. */
  skips(entry: FsWalkEntry): boolean {
    if (this.cut !== undefined && entry.path.startsWith(this.cut)) return true;
    this.cut = undefined;
    return false;
  }

  /** After `entry` was yielded: a real subdirectory the caller prunes cuts what follows it. */
  passed(entry: FsWalkEntry): void {
    if (entry.type === 'directory' && entry.target.targetKey === `${this.base}${entry.path}` && this.decide(entry)) this.cut = `${entry.path}/`;
  }
}

/** A walk as the contract promises it: FsErrors only, abortable, yielding to timers. */
async function* guardedWalk(
  open: () => AsyncIterable<FsWalkEntry>,
  what: string,
  signal: AbortSignal | undefined,
  pruner?: Pruner,
): AsyncGenerator<FsWalkEntry> {
  try {
    throwIfAborted(signal, what);
    for await (const entry of open()) {
      if (pruner?.skips(entry)) continue;
      if (dueToYield()) await yieldToTimers();
      throwIfAborted(signal, what);
      yield entry;
      pruner?.passed(entry);
    }
  } catch (err) {
    throw toFsError(err, what);
  }
}

/**
 * A provider that never waits for I/O (the memory one) would otherwise keep the event loop to
 * itself through a long run of calls, a search or an agent loop: no timer, and so no
 * `AbortSignal.timeout`, could fire until it ended. Every call checks the clock, and one that
 * comes 10 ms after the last yield lets timers and I/O run first. `setImmediate` is taken from
 * node:timers, which fake timers in a caller's tests leave alone.
 */
const YIELD_EVERY_MS = 10;
let lastYield = performance.now();

function dueToYield(): boolean {
  return performance.now() - lastYield >= YIELD_EVERY_MS;
}

function yieldToTimers(): Promise<void> {
  return new Promise((resolve) =>
    setImmediate(() => {
      lastYield = performance.now();
      resolve();
    }),
  );
}

/**
 * The chunks of streamText: valid UTF-8 decoded STREAM_CHUNK bytes at a time, the signal checked
 * before each. A plain iterator rather than an async generator, which costs several µs per call.
 */
function textChunks(body: Uint8Array, signal: AbortSignal | undefined, what: string): AsyncIterableIterator<string> {
  let start = 0;
  const finished: IteratorResult<string> = { value: undefined, done: true };
  const chunk = (): Promise<IteratorResult<string>> => {
    if (start >= body.length) return Promise.resolve(finished);
    try {
      throwIfAborted(signal, what);
    } catch (err) {
      // Like a generator that threw: nothing more after the error.
      start = body.length;
      return Promise.reject(err);
    }
    const end = validUtf8ChunkEnd(body, start, STREAM_CHUNK);
    const value = decodeValidUtf8(body.subarray(start, end));
    start = end;
    return Promise.resolve({ value, done: false });
  };
  const iterator: AsyncIterableIterator<string> = {
    next() {
      if (start >= body.length) return Promise.resolve(finished);
      if (dueToYield()) return yieldToTimers().then(() => chunk());
      return chunk();
    },
    return() {
      start = body.length;
      return Promise.resolve(finished);
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

function checkTargetShape(target: unknown): asserts target is FsTarget {
  const t = target as Partial<FsTarget> | null;
  if (
    typeof t !== 'object' ||
    t === null ||
    typeof t.targetKey !== 'string' ||
    t.targetKey.length === 0 ||
    typeof t.displayPath !== 'string'
  ) {
    throw new FsError('FS_INVALID_ARGUMENT', `expected an FsTarget from resolve(), got ${describeType(target)}`);
  }
}

function checkIntent(intent: unknown, allowCreate: boolean): void {
  if (intent === undefined) return;
  const i = intent as Partial<{ kind: string; version: unknown }> | null;
  if (typeof i === 'object' && i !== null) {
    if (i.kind === 'createIfAbsent' && allowCreate) return;
    if (i.kind === 'replaceIfVersion' && typeof i.version === 'string' && i.version.length > 0) return;
  }
  throw new FsError('FS_INVALID_ARGUMENT', `invalid write intent ${safeJson(intent)}`);
}

function checkEdit(edit: unknown): Required<FsEditRequest> {
  const e = edit as Partial<FsEditRequest> | null;
  if (typeof e !== 'object' || e === null) throw new FsError('FS_INVALID_ARGUMENT', 'edit must be an object');
  if (typeof e.oldString !== 'string' || e.oldString.length === 0) {
    throw new FsError('FS_INVALID_ARGUMENT', 'old_string must be a non-empty string');
  }
  assertWritableText(e.oldString, 'old_string');
  assertWritableText(e.newString, 'new_string');
  if (crlfToLf(e.oldString) === crlfToLf(e.newString)) {
    throw new FsError('FS_INVALID_ARGUMENT', 'old_string and new_string are identical; there is nothing to change');
  }
  if (e.replaceAll !== undefined && typeof e.replaceAll !== 'boolean') {
    throw new FsError('FS_INVALID_ARGUMENT', 'replace_all must be a boolean');
  }
  return { oldString: e.oldString, newString: e.newString, replaceAll: e.replaceAll ?? false };
}
