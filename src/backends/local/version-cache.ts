import type { FsVersion } from '../../seam/types.js';

/** The stat fields a cached version is keyed on (nanosecond timestamps, never milliseconds). */
export interface StatTuple {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
}

export interface VersionCacheOptions {
  /** Wall clock in nanoseconds since the epoch (injectable for tests). */
  readonly now?: () => bigint;
  /**
   * How close a file timestamp may come to the moment its version was recorded before the entry
   * is no longer trusted. Covers timestamp granularity (4 ms ticks on ext4, 2 s on FAT, unknown on
   * network filesystems) and clock skew. Default 2 s.
   */
  readonly racyWindowNs?: bigint;
  /** Most entries kept; the oldest are dropped first. Default 10,000. */
  readonly maxEntries?: number;
}

export const DEFAULT_RACY_WINDOW_NS = 2_000_000_000n;

export const wallClockNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

interface Entry {
  readonly tuple: StatTuple;
  readonly version: FsVersion;
  readonly recordedAt: bigint;
}

export function tupleOf(st: StatTuple): StatTuple {
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs };
}

export function sameTuple(a: StatTuple, b: StatTuple): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/**
 * git's "racy clean" rule: a file whose timestamps are not clearly older than the moment its
 * content was hashed may have been rewritten within the same timestamp tick after the hash, with
 * an identical stat tuple. Such an entry proves nothing; the file must be hashed again.
 */
export function isRacilyClean(tuple: StatTuple, recordedAt: bigint, windowNs: bigint): boolean {
  return tuple.mtimeNs + windowNs >= recordedAt || tuple.ctimeNs + windowNs >= recordedAt;
}

/**
 * Remembers content versions by stat tuple so `stat` need not re-hash an unchanged file. The
 * tuple is only a cache key: a miss always falls back to hashing the bytes.
 */
export class VersionCache {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => bigint;
  readonly #window: bigint;
  readonly #max: number;

  constructor(options: VersionCacheOptions = {}) {
    this.#now = options.now ?? wallClockNs;
    this.#window = options.racyWindowNs ?? DEFAULT_RACY_WINDOW_NS;
    this.#max = options.maxEntries ?? 10_000;
    if (this.#window < 0n) throw new RangeError('racyWindowNs must not be negative');
  }

  /** The cached version, or undefined when absent, when any field differs, or when racily clean. */
  lookup(key: string, tuple: StatTuple): FsVersion | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || !sameTuple(entry.tuple, tuple)) return undefined;
    if (isRacilyClean(entry.tuple, entry.recordedAt, this.#window)) return undefined;
    return entry.version;
  }

  /**
   * Records the version of bytes whose stat tuple was `tuple`. `recordedAt` must be a time no
   * earlier than when the bytes were read (default: now, taken after the read).
   */
  record(key: string, tuple: StatTuple, version: FsVersion, recordedAt: bigint = this.#now()): void {
    this.#entries.delete(key);
    this.#entries.set(key, { tuple: tupleOf(tuple), version, recordedAt });
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
