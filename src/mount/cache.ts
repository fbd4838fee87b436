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

  /** `path` changed: it and its directory (whose times and listing changed with it) are dropped. */
  forget(path: string): void {
    if (this.#byPath.size === 0) return;
    this.#byPath.delete(path);
    this.#byPath.delete(parentOf(path));
  }

  /** `path` was removed, renamed or replaced: everything at or below it is dropped too. */
  forgetTree(path: string): void {
    this.forget(path);
    this.#keys.delete(path);
    const prefix = path === '/' ? '/' : `${path}/`;
    for (const p of this.#byPath.keys()) if (p.startsWith(prefix)) this.#byPath.delete(p);
    for (const p of this.#keys.keys()) if (p.startsWith(prefix)) this.#keys.delete(p);
  }
}

function parentOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at <= 0 ? '/' : path.slice(0, at);
}
