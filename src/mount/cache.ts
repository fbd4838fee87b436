import type { FsTargetKey } from '../seam/index.js';
import type { Stat } from './attrs.js';

interface Cached {
  readonly key: FsTargetKey;
  readonly stat: Stat;
  readonly until: number;
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;

/** Beyond this many paths the cache starts over rather than grow without bound. */
const MAX_ENTRIES = 200_000;

/**
 * Attributes the mount answered recently, by FUSE path, for as long as the kernel may cache them
 * (so the mount is no staler than the kernel already is). A listing fills it, so the getattr the
 * kernel sends for each name after a readdir costs no contract call. The mount's own changes drop
 * what they touch at once; a change made by another writer shows once the entry expires.
 */
export class AttrCache {
  readonly #byPath = new Map<string, Cached>();
  /**
   * The target key of each path, kept after its attributes are dropped: a change to a file or to
   * a directory's entries leaves the key it is found by as it was (forgetTree drops keys).
   */
  readonly #keys = new Map<string, { readonly key: FsTargetKey; readonly dir: boolean; readonly until: number }>();

  /** Directories listed ahead of a getattr, and until when another miss there waits for that listing. */
  readonly #ahead = new Map<string, { readonly until: number; readonly done: Promise<void> }>();
  /** The names of each directory as its last listing found them, with names the mount made since. */
  readonly #names = new Map<string, { readonly names: Set<string>; readonly until: number }>();
  #epoch = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get(path: string): Cached | undefined {
    const hit = this.#byPath.get(path);
    if (hit === undefined) return undefined;
    if (hit.until > this.now()) return hit;
    this.#byPath.delete(path);
    return undefined;
  }

  set(path: string, key: FsTargetKey, stat: Stat): void {
    if (this.ttlMs <= 0) return;
    if (this.#byPath.size >= MAX_ENTRIES) this.#byPath.clear();
    if (this.#keys.size >= MAX_ENTRIES) this.#keys.clear();
    const until = this.now() + this.ttlMs;
    this.#byPath.set(path, { key, stat, until });
    this.#keys.set(path, { key, dir: (stat.mode & S_IFMT) === S_IFDIR, until });
  }

  /** The key of a name the mount itself just made (no link), for the lookups that follow. */
  setKey(path: string, key: FsTargetKey, dir: boolean): void {
    if (this.ttlMs <= 0) return;
    if (this.#keys.size >= MAX_ENTRIES) this.#keys.clear();
    this.#keys.set(path, { key, dir, until: this.now() + this.ttlMs });
  }

  /** The key `path` was last found at (no link), while the kernel may still cache its entry. */
  keyOf(path: string): { readonly key: FsTargetKey; readonly dir: boolean } | undefined {
    const hit = this.#keys.get(path);
    if (hit === undefined) return undefined;
    if (hit.until > this.now()) return hit;
    this.#keys.delete(path);
    return undefined;
  }

  /** Counts the changes the mount made: a listing read before one must not be remembered after it. */
  get epoch(): number {
    return this.#epoch;
  }

  /**
   * Lists `dir` (with `list`) at most once while its entries may be cached: a getattr that misses
   * waits for the one listing of its directory rather than asking the provider about its own name,
   * as programs that walk a tree stat every name in turn.
   */
  listAhead(dir: string, list: () => Promise<void>): Promise<void> {
    const now = this.now();
    const seen = this.#ahead.get(dir);
    if (seen !== undefined && seen.until > now) return seen.done;
    if (this.#ahead.size >= MAX_ENTRIES) this.#ahead.clear();
    const done = list().catch(() => undefined);
    this.#ahead.set(dir, { until: now + this.ttlMs, done });
    return done;
  }

  /** A listing of `dir` made since the last change (see `epoch`): its names, for `absent`. */
  listed(dir: string, names: Iterable<string>): void {
    if (this.ttlMs <= 0) return;
    if (this.#names.size >= MAX_ENTRIES) this.#names.clear();
    this.#names.set(dir, { names: new Set(names), until: this.now() + this.ttlMs });
  }

  /** Whether `path` is known to be absent: its directory was listed recently without it. */
  absent(path: string): boolean {
    const at = path.lastIndexOf('/');
    const dir = at <= 0 ? '/' : path.slice(0, at);
    const seen = this.#names.get(dir);
    if (seen === undefined) return false;
    if (seen.until <= this.now()) {
      this.#names.delete(dir);
      return false;
    }
    return !seen.names.has(path.slice(at + 1));
  }

  /** `path` changed: it and its directory (whose times and listing changed with it) are dropped. */
  forget(path: string): void {
    this.#epoch++;
    // The name may exist now: never again reported absent from the listing before.
    if (path !== '/') this.#names.get(parentOf(path))?.names.add(path.slice(path.lastIndexOf('/') + 1));
    if (this.#byPath.size === 0) return;
    this.#byPath.delete(path);
    this.#byPath.delete(parentOf(path));
  }

  /** `path` was removed, renamed or replaced: everything at or below it is dropped too. */
  forgetTree(path: string): void {
    this.forget(path);
    this.#ahead.delete(path);
    this.#names.delete(path);
    this.#keys.delete(path);
    const prefix = path === '/' ? '/' : `${path}/`;
    for (const p of this.#byPath.keys()) if (p.startsWith(prefix)) this.#byPath.delete(p);
    for (const p of this.#keys.keys()) if (p.startsWith(prefix)) this.#keys.delete(p);
    for (const p of this.#names.keys()) if (p.startsWith(prefix)) this.#names.delete(p);
  }
}

function parentOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at <= 0 ? '/' : path.slice(0, at);
}
