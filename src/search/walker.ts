import { FsError, isRealSubdirectory, toFsError, walkBatches, type FileSystem, type FsTarget, type FsWalkEntry, type FsWalkOptions } from '../seam/index.js';
import { Runs } from '../seam/fs-walk.js';

/*
 * The one walker of search, used by glob and grep: `fs.walk` (a provider's native bulk listing,
 * else the seam's listDir walk), so confinement stays the provider's and a directory costs one
 * listing, not a resolve and a stat per entry. The contract's walk never follows a link to a
 * directory; search does, as it always did: such a link is walked on its own, in place (so tree
 * order holds), unless its target contains a directory the walk is inside (a cycle).
 */

export interface WalkItem {
  /** Absolute path, in the unresolved form of the walked directory. */
  readonly path: string;
  /** Path below the walked directory (`src/a.ts`). */
  readonly rel: string;
  readonly entry: FsWalkEntry;
}

export interface WalkerSkip {
  readonly path: string;
  readonly reason: 'unreadable' | 'loop';
  readonly error?: FsError;
}

export interface WalkerOptions {
  readonly signal?: AbortSignal;
  /** A directory (given its item) whose contents are not wanted. */
  readonly prune?: (item: WalkItem) => boolean;
  /** Directories passed over: unreadable ones below the top, and links that would loop. */
  readonly onSkip: (skip: WalkerSkip) => void;
  /** Stop quietly once this many entries were seen; `exceeded` then tells. */
  readonly maxEntries?: number;
  /** Do not descend below this many segments (1: the top's children only). */
  readonly maxDepth?: number;
  /** Given a file's path below the walked directory and its name: false when its size and mtime are not needed. */
  readonly wantsStats?: (rel: string, name: string) => boolean;
  /**
   * Passed to `fs.walk` (its `narrow` hint): only files whose name ends with one of these are
   * wanted. Entries a provider leaves out still count toward `maxEntries`; where they would
   * reach it, the walk stops with `overNarrowed` (walk again without the hint for the exact cap).
   */
  readonly fileNameEndsWith?: readonly string[];
}

export interface Walker extends AsyncIterable<WalkItem> {
  readonly exceeded: boolean;
  /** Entries the provider left out (see `fileNameEndsWith`) brought the count past `maxEntries`. */
  readonly overNarrowed: boolean;
  /** The same items a run at a time (a run of one directory's entries, mostly): a promise per run, not per item. */
  batches(): AsyncIterable<readonly WalkItem[]>;
}

interface Chain {
  readonly target: FsTarget;
  readonly parent: Chain | undefined;
}

export function walkFrom(fs: FileSystem, top: FsTarget, topPath: string, options: WalkerOptions): Walker {
  return new Walk(fs, top, topPath, options);
}

const join = (dir: string, rel: string) => (dir === '/' ? `/${rel}` : `${dir}/${rel}`);

/**
 * One walk's state, with `below` at module level rather than a closure per walk: a generator
 * function made per walk gives its generators a map of their own, and code optimized for one
 * search's walk was thrown away at each next one (measured: grep's callers reoptimized at every
 * search of a process).
 */
class Walk implements Walker {
  readonly maxEntries: number;
  readonly maxDepth: number;
  seen = 0;
  #exceeded = false;
  leftOut = 0;
  readonly narrow: FsWalkOptions['narrow'];

  constructor(
    readonly fs: FileSystem,
    private readonly top: FsTarget,
    private readonly topPath: string,
    readonly options: WalkerOptions,
  ) {
    this.maxEntries = options.maxEntries ?? Infinity;
    this.maxDepth = options.maxDepth ?? Infinity;
    const endings = options.fileNameEndsWith;
    this.narrow = endings && { fileNameEndsWith: endings, leftOut: (n: number) => void ((this.leftOut += n), (this.seen += n)) };
  }

  get exceeded(): boolean {
    return this.#exceeded;
  }

  setExceeded(): void {
    this.#exceeded = true;
  }

  get overNarrowed(): boolean {
    return this.leftOut > 0 && (this.#exceeded || this.seen > this.maxEntries);
  }

  batches(): AsyncIterable<readonly WalkItem[]> {
    return new Runs(() => this.#start());
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<WalkItem> {
    for await (const items of this.#start()) yield* items;
  }

  #start(): AsyncGenerator<WalkItem[]> {
    return below(this, this.top, this.topPath, '', { target: this.top, parent: undefined }, 0);
  }
}

async function* below(w: Walk, dir: FsTarget, dirPath: string, relPrefix: string, chain: Chain, prefixDepth: number): AsyncGenerator<WalkItem[]> {
  const { fs, options, maxDepth, narrow } = w;
  const wantsStats = options.wantsStats;
  const walk = fs.walk(dir, {
    ...(options.signal ? { signal: options.signal } : {}),
    prune: (entry) => {
      const rel = relPrefix === '' ? entry.path : `${relPrefix}/${entry.path}`;
      if (prefixDepth + segments(entry.path) >= maxDepth) return true;
      return options.prune?.({ path: join(dirPath, entry.path), rel, entry }) === true;
    },
    onUnreadable: (entry, error) => options.onSkip({ path: join(dirPath, entry.path), reason: 'unreadable', error }),
    ...(wantsStats ? { wantsStats: (path: string, name: string) => wantsStats(relPrefix === '' ? path : `${relPrefix}/${path}`, name) } : {}),
    ...(narrow ? { narrow } : {}),
  });
  // The real directories walked so far, by path below `dir`: a listed directory is a link unless its key is its parent's child key.
  const dirs = new Map<string, FsTarget>([['', dir]]);
  for await (const run of walkBatches(walk)) {
    let items: WalkItem[] = [];
    for (const entry of run) {
      if (++w.seen > w.maxEntries) {
        w.setExceeded();
        if (w.leftOut > 0) return; // the cap without the hint falls elsewhere: the caller walks again
        if (items.length > 0) yield items;
        return;
      }
      const rel = relPrefix === '' ? entry.path : `${relPrefix}/${entry.path}`;
      const path = join(dirPath, entry.path);
      const item: WalkItem = { path, rel, entry };
      items.push(item);
      if (entry.type !== 'directory') continue;
      const slash = entry.path.lastIndexOf('/');
      const parent = dirs.get(slash === -1 ? '' : entry.path.slice(0, slash));
      if (parent === undefined) continue; // below a link, which the walk does not descend into
      if (isRealSubdirectory(parent, entry, (p, name) => fs.childKey(p, name))) {
        dirs.set(entry.path, entry.target);
        continue;
      }
      // A link to a directory: walked in place unless it leads back into the walk.
      const depth = prefixDepth + segments(entry.path);
      // What came before the link is handed over first: prune may depend on it.
      yield items;
      items = [];
      if (depth >= maxDepth || options.prune?.(item) === true) continue;
      if (fs.contains(entry.target, parent) || loops(fs, entry.target, chain)) {
        options.onSkip({ path, reason: 'loop' });
        continue;
      }
      try {
        yield* below(w, entry.target, path, rel, { target: entry.target, parent: chain }, depth);
      } catch (err) {
        const error = toFsError(err, `cannot list "${path}"`);
        if (error.code === 'FS_ABORTED' || w.exceeded) throw error;
        options.onSkip({ path, reason: 'unreadable', error });
      }
    }
    if (items.length > 0) yield items;
  }
}

function loops(fs: FileSystem, target: FsTarget, chain: Chain | undefined): boolean {
  for (let node = chain; node !== undefined; node = node.parent) if (fs.contains(target, node.target)) return true;
  return false;
}

function segments(rel: string): number {
  let n = 1;
  for (let i = rel.indexOf('/'); i !== -1; i = rel.indexOf('/', i + 1)) n++;
  return n;
}
