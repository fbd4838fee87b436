import { FsError, throwIfAborted, toFsError } from './errors.js';
import { dueToYield, yieldToTimers } from './fs-call.js';
import type { FsContext } from './fs-context.js';
import { inListingOrder, walkOrderOf } from './listing.js';
import { childKeyOf } from './links.js';
import { pathChild } from './path.js';
import { FsTargetKey, type FileSystem, type FsDirEntry, type FsProvider, type FsTarget, type FsWalkEntry, type FsWalkNarrowing, type FsWalkOptions } from './types.js';

/** walk (D4): the provider's own walk when it has one, else depth first over listDir. */
export function createWalk(ctx: FsContext): FileSystem['walk'] {
  const { provider } = ctx;
  return function walk(target: FsTarget, opts?: FsWalkOptions): AsyncIterable<FsWalkEntry> {
    ctx.checkTarget(target);
    const what = `cannot walk "${target.displayPath}"`;
    const signal = opts?.signal;
    const hooks = walkHooks(opts);
    const native = provider.walk?.bind(provider);
    if (native === undefined) return guardedWalk(() => walkByListing(provider, target, signal, hooks), what, signal);
    const pruner = hooks.prune ? new Pruner(target, hooks.prune, childKeyOf(provider)) : undefined;
    return guardedWalk(() => native(target, { signal, ...hooks, ...(pruner ? { prune: pruner.decide } : {}) }), what, signal, pruner);
  };
}

/** D4 for providers without `walk`: depth first over listDir, into real subdirectories only. */
function walkByListing(
  provider: FsProvider,
  top: FsTarget,
  signal: AbortSignal | undefined,
  hooks: Pick<FsWalkOptions, 'prune' | 'onUnreadable'> = {},
): AsyncGenerator<FsWalkEntry> {
  return depthFirst(top, (dir) => provider.listDir(dir, { signal }), hooks, childKeyOf(provider));
}

/**
 * The walk of D4 over any listing function: a directory's entries, each followed by the entries
 * of its real subdirectories (never a link's), with their paths below `top`. `list` is told
 * whether it lists `top` itself (which a provider may need to check further than a child), and the
 * listed directory's path below `top`. The generator also answers `walkBatches` (the same walk, a
 * run of entries at a time).
 */
export function depthFirst(
  top: FsTarget,
  list: (dir: FsTarget, isTop: boolean, prefix: string) => Promise<FsDirEntry[]>,
  hooks: Pick<FsWalkOptions, 'prune' | 'onUnreadable'> = {},
  childKey: ChildKey = pathChildKey,
): AsyncGenerator<FsWalkEntry> {
  const batches = depthFirstBatches(top, list, hooks, childKey);
  return Object.assign(flatten(batches), { [WALK_BATCHES]: () => batches });
}

/**
 * Marks a walk that can also be taken a run of entries at a time (see `walkBatches`): each
 * layer between a listing and its consumer then costs a promise per run, not per entry.
 */
export const WALK_BATCHES = Symbol('walk batches');

interface Batched {
  [WALK_BATCHES]?: () => AsyncIterator<FsWalkEntry[]>;
}

/**
 * A walk a run of entries at a time: `walk`'s entries in `walk`'s order, each run ending at
 * the latest at a real subdirectory, so `prune` is still asked after its consumer saw the
 * directory and before anything below it is listed. A walk that cannot batch gives one entry a run.
 */
export function walkBatches(walk: AsyncIterable<FsWalkEntry>): AsyncIterable<readonly FsWalkEntry[]> {
  const batched = (walk as Batched)[WALK_BATCHES];
  if (batched !== undefined) return new Runs(batched);
  return singles(walk);
}

/**
 * `make`'s iterator, behind a method of a class: a consumer's `for await` then calls one function
 * whatever the walk, where an object literal holding each walk's own function made optimized
 * consumers throw their code away at the next walk ("wrong call target").
 */
export class Runs<T> implements AsyncIterable<T> {
  constructor(private readonly make: () => AsyncIterator<T>) {}

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this.make();
  }
}

async function* singles(walk: AsyncIterable<FsWalkEntry>): AsyncGenerator<readonly FsWalkEntry[]> {
  for await (const entry of walk) yield [entry];
}

async function* flatten(batches: AsyncIterator<readonly FsWalkEntry[]>): AsyncGenerator<FsWalkEntry> {
  for (let next = await batches.next(); !next.done; next = await batches.next()) yield* next.value;
}

async function* depthFirstBatches(
  top: FsTarget,
  list: (dir: FsTarget, isTop: boolean, prefix: string) => Promise<FsDirEntry[]>,
  hooks: Pick<FsWalkOptions, 'prune' | 'onUnreadable'>,
  childKey: ChildKey,
): AsyncGenerator<FsWalkEntry[]> {
  const stack = [{ dir: top, prefix: '', entries: inListingOrder(await list(top, true, '')), next: 0 }];
  let run: FsWalkEntry[] = [];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const entry = frame.entries[frame.next++];
    if (entry === undefined) {
      stack.pop();
      continue;
    }
    const path = frame.prefix === '' ? entry.name : `${frame.prefix}/${entry.name}`;
    const walked = withPath(entry, path);
    run.push(walked);
    if (!isRealSubdirectory(frame.dir, entry, childKey)) continue;
    // The consumer sees the directory before it is pruned or listed.
    yield run;
    run = [];
    if (hooks.prune?.(walked) !== true) {
      const entries = await listOrSkip(() => list(entry.target, false, path), walked, hooks.onUnreadable);
      if (entries !== undefined) stack.push({ dir: entry.target, prefix: path, entries: inListingOrder(entries), next: 0 });
    }
  }
  if (run.length > 0) yield run;
}

/** A whole tree fetched at once whose entries are built only as they are handed over. */
export interface FetchedTree {
  /** Each entry's path below the walked directory, in any order. */
  readonly paths: readonly string[];
  /** The entry whose path is `paths[i]`. */
  entry(i: number): FsWalkEntry;
}

/**
 * A provider's walk of a whole tree fetched at once (`load`: its entries, in any order, or a walk
 * to take instead): in walk order, a run of entries at a time, each run ending at a directory so
 * `prune` is still asked before anything below it is handed over. A `FetchedTree` keeps only the
 * paths alive during the walk, not an entry per row.
 */
export function treeWalk(load: () => Promise<FsWalkEntry[] | FetchedTree | AsyncIterable<FsWalkEntry>>): AsyncGenerator<FsWalkEntry> {
  const batches = async function* (): AsyncGenerator<readonly FsWalkEntry[]> {
    const loaded = await load();
    if (!Array.isArray(loaded) && !('paths' in loaded)) {
      yield* walkBatches(loaded as AsyncIterable<FsWalkEntry>);
      return;
    }
    const tree: FetchedTree = Array.isArray(loaded) ? { paths: loaded.map((e) => e.path), entry: (i) => loaded[i]! } : loaded;
    const order = walkOrderOf(tree.paths);
    let run: FsWalkEntry[] = [];
    for (let k = 0; k < tree.paths.length; k++) {
      const entry = tree.entry(order === undefined ? k : order[k]!);
      run.push(entry);
      if (entry.type !== 'directory') continue;
      yield run;
      run = [];
    }
    if (run.length > 0) yield run;
  };
  return Object.assign(flatten(batches()), { [WALK_BATCHES]: batches });
}

/** `entry` with its walk path; a spread only for an entry with stats (a spread per entry was most of a memory walk). */
function withPath(entry: FsDirEntry, path: string): FsWalkEntry {
  if (entry.size === undefined && entry.mtimeMs === undefined && entry.executable === undefined) {
    return { name: entry.name, type: entry.type, target: entry.target, path };
  }
  return { ...entry, path };
}

/** The walk hooks of `opts`, checked (a caller's bad option is an argument error, not a crash). */
function walkHooks(opts: FsWalkOptions | undefined): Pick<FsWalkOptions, 'prune' | 'onUnreadable' | 'wantsStats' | 'narrow'> {
  const { prune, onUnreadable, wantsStats, narrow } = opts ?? {};
  for (const [name, hook] of [['prune', prune], ['onUnreadable', onUnreadable], ['wantsStats', wantsStats]] as const) {
    if (hook !== undefined && typeof hook !== 'function') throw new FsError('FS_INVALID_ARGUMENT', `walk: ${name} must be a function`);
  }
  return {
    ...(prune ? { prune } : {}),
    ...(onUnreadable ? { onUnreadable } : {}),
    ...(wantsStats ? { wantsStats } : {}),
    ...(narrow === undefined ? {} : { narrow: checkedNarrowing(narrow) }),
  };
}

/**
 * For a provider's listing inside a walk given `narrow`: counts the regular files it may leave
 * out (`leavesOut(name)`), and tells the walk how many (`report()`, before the listing's entries
 * are handed over). Without the hint it leaves out nothing.
 */
export function narrowing(narrow: FsWalkNarrowing | undefined): { leavesOut(name: string): boolean; report(): void } {
  if (narrow === undefined) return { leavesOut: () => false, report: () => {} };
  const endings = narrow.fileNameEndsWith;
  let count = 0;
  return {
    leavesOut(name) {
      for (const e of endings) if (name.endsWith(e)) return false;
      count++;
      return true;
    },
    report() {
      if (count > 0) narrow.leftOut(count);
      count = 0;
    },
  };
}

/** The narrow hint, checked: at least one non-empty name ending without "/", and a leftOut function. */
function checkedNarrowing(narrow: FsWalkNarrowing): FsWalkNarrowing {
  const endings: unknown = narrow?.fileNameEndsWith;
  const ok = Array.isArray(endings) && endings.length > 0 && endings.every((e) => typeof e === 'string' && e !== '' && !e.includes('/'));
  if (!ok || typeof narrow.leftOut !== 'function') {
    throw new FsError('FS_INVALID_ARGUMENT', 'walk: narrow needs fileNameEndsWith (names without "/") and a leftOut function');
  }
  return { fileNameEndsWith: [...(endings as string[])], leftOut: narrow.leftOut };
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

type ChildKey = (parent: FsTarget, name: string) => FsTargetKey;
const pathChildKey: ChildKey = (parent, name) => FsTargetKey(pathChild(parent.targetKey, name));

/** A directory entry reached by its own name, not through a link (which could loop or repeat a subtree). */
export function isRealSubdirectory(dir: FsTarget, entry: FsDirEntry, childKey: ChildKey = pathChildKey): boolean {
  return entry.type === 'directory' && entry.target.targetKey === childKey(dir, entry.name);
}

/**
 * `prune` as the contract promises it over a provider's own walk, which may not honour it: the
 * caller is asked once per real subdirectory, and what lies below a pruned one is dropped.
 */
class Pruner {
  private readonly decided = new Map<string, boolean>();
  /** The key of each real directory passed so far, by its path below the top ('' for the top). */
  private readonly dirs = new Map<string, FsTarget>();
  // Tree order puts a directory's descendants right after it, so one cut at a time suffices.
  private cut: string | undefined;

  constructor(
    top: FsTarget,
    private readonly prune: NonNullable<FsWalkOptions['prune']>,
    private readonly childKey: ChildKey,
  ) {
    this.dirs.set('', top);
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
    if (entry.type !== 'directory') return;
    const slash = entry.path.lastIndexOf('/');
    const parent = this.dirs.get(slash === -1 ? '' : entry.path.slice(0, slash));
    if (parent === undefined || !isRealSubdirectory(parent, entry, this.childKey)) return;
    this.dirs.set(entry.path, entry.target);
    if (this.decide(entry)) this.cut = `${entry.path}/`;
  }
}

/** A walk as the contract promises it: FsErrors only, abortable, yielding to timers. */
function guardedWalk(
  open: () => AsyncIterable<FsWalkEntry>,
  what: string,
  signal: AbortSignal | undefined,
  pruner?: Pruner,
): AsyncGenerator<FsWalkEntry> {
  let source: AsyncIterable<FsWalkEntry> | undefined;
  const opened = () => (source ??= open());
  const batches = () => guardedBatches(opened, what, signal, pruner);
  return Object.assign(flatten(batches()), { [WALK_BATCHES]: batches });
}

async function* guardedBatches(
  open: () => AsyncIterable<FsWalkEntry>,
  what: string,
  signal: AbortSignal | undefined,
  pruner?: Pruner,
): AsyncGenerator<FsWalkEntry[]> {
  try {
    throwIfAborted(signal, what);
    for await (const run of walkBatches(open())) {
      if (dueToYield()) await yieldToTimers();
      throwIfAborted(signal, what);
      const passing = pruner === undefined ? (run as FsWalkEntry[]) : run.filter((entry) => !pruner.skips(entry));
      if (passing.length === 0) continue;
      yield passing;
      if (pruner !== undefined) for (const entry of passing) pruner.passed(entry);
    }
  } catch (err) {
    throw toFsError(err, what);
  }
}
