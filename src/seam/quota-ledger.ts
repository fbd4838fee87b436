import { AsyncLocalStorage } from 'node:async_hooks';
import { FsError } from './errors.js';
import { NOTHING, describeBytes, describeFiles, minus, plus, treeFigures } from './quota-figures.js';
import type { FsProvider, FsUsage } from './types.js';

/** Q1: limits on what a filesystem may hold, checked before every change that adds to it. */
export interface FsQuota {
  /** Bytes of regular files at most (links and directories hold none). */
  readonly maxBytes?: number;
  /** Files at most: regular files, links and anything else that is no directory. */
  readonly maxFiles?: number;
}

/** What was in use when an operation began (a store's own figure, with what had settled by then). */
interface Mark {
  readonly used: FsUsage | undefined;
  readonly settled: FsUsage;
}

/** An operation's share of the quota: its change, and the part of it held until it ends. */
export interface Claim {
  readonly mark: Mark;
  delta: FsUsage;
  held: FsUsage;
  readonly checked: boolean;
}

const positive = (u: FsUsage): FsUsage => ({ bytes: Math.max(0, u.bytes), files: Math.max(0, u.files) });

/**
 * The quota's books. A store that counts for itself (`usage`) is asked at the start of each
 * operation; otherwise the seam counts the view once, at the first operation, and adds each
 * change it makes. An operation that adds holds its share from its check (synchronous, so two
 * racing writes cannot both take the last room) until it ends; what ended since a store's
 * figure was read is added to it, so a figure read before another write landed never counts
 * that write twice too few.
 */
export class QuotaLedger {
  readonly #limits: FsQuota;
  readonly #provider: FsProvider;
  #tracked: FsUsage | undefined;
  #counting: Promise<void> | undefined;
  #held: FsUsage = NOTHING;
  #settled: FsUsage = NOTHING;
  /** Inside a change checked as a whole (a batch made file by file): its parts are not checked again. */
  readonly #whole = new AsyncLocalStorage<true>();

  constructor(provider: FsProvider, limits: FsQuota) {
    this.#provider = provider;
    this.#limits = limits;
  }

  /** True when the store gives its own figures: the seam does not follow its changes then. */
  get storeCounts(): boolean {
    return this.#provider.usage !== undefined;
  }

  async begin(signal: AbortSignal | undefined): Promise<Mark> {
    const provider = this.#provider;
    if (provider.usage) {
      const settled = this.#settled;
      return { used: await provider.usage(undefined, { signal }), settled };
    }
    if (this.#tracked === undefined) {
      // Shared by every operation waiting for it, so no caller's signal stops it for the others.
      this.#counting ??= this.#count().finally(() => (this.#counting = undefined));
      await this.#counting;
    }
    return { used: undefined, settled: this.#settled };
  }

  async #count(): Promise<void> {
    const provider = this.#provider;
    const root = await provider.resolve(provider.root ?? '/', {});
    this.#tracked = await treeFigures(provider, root, undefined);
  }

  /** Checks that `delta` fits and holds what it adds; FS_QUOTA_EXCEEDED when it does not. */
  claim(mark: Mark, delta: FsUsage, what: string): Claim {
    const checked = this.#whole.getStore() === undefined;
    const claim: Claim = { mark, delta: NOTHING, held: NOTHING, checked };
    this.grow(claim, delta, what);
    return claim;
  }

  /** The claim's change is now `delta` (a stream that wrote more): checked and held as in claim. */
  grow(claim: Claim, delta: FsUsage, what: string): void {
    const wanted = claim.checked ? positive(delta) : NOTHING;
    const extra = positive(minus(wanted, claim.held));
    if (extra.bytes > 0 || extra.files > 0) this.#check(claim.mark, extra, what);
    this.#held = plus(this.#held, minus(wanted, claim.held));
    claim.held = wanted;
    claim.delta = delta;
  }

  /** The operation ended; `applied`: its change was made (else nothing changed). */
  end(claim: Claim, applied: boolean): void {
    this.#held = minus(this.#held, claim.held);
    if (applied) {
      this.#settled = plus(this.#settled, positive(claim.delta));
      if (this.#tracked !== undefined) this.#tracked = plus(this.#tracked, claim.delta);
    }
    claim.held = NOTHING;
  }

  /** Runs `fn` (a change already claimed as a whole) without checking its parts again. */
  whole<T>(fn: () => Promise<T>): Promise<T> {
    return this.#whole.run(true, fn);
  }

  /** What is in use now, as this filesystem knows it (for messages and tests). */
  used(mark: Mark): FsUsage {
    return mark.used === undefined ? (this.#tracked ?? NOTHING) : plus(mark.used, minus(this.#settled, mark.settled));
  }

  #check(mark: Mark, extra: FsUsage, what: string): void {
    const { maxBytes, maxFiles } = this.#limits;
    const used = this.used(mark);
    const held = this.#held;
    const over = (axis: 'bytes' | 'files', max: number | undefined) => max !== undefined && extra[axis] > 0 && used[axis] + held[axis] + extra[axis] > max;
    const inUse = `${describeBytes(used.bytes)} in ${describeFiles(used.files)}`;
    const pending = held.bytes > 0 || held.files > 0 ? `, and ${describeBytes(held.bytes)} in ${describeFiles(held.files)} held by changes in progress` : '';
    if (over('bytes', maxBytes)) {
      throw new FsError(
        'FS_QUOTA_EXCEEDED',
        `${what}: it would pass the quota of ${describeBytes(maxBytes!)} (in use: ${inUse}${pending}; this change adds ${describeBytes(extra.bytes)}); nothing was changed`,
      );
    }
    if (over('files', maxFiles)) {
      throw new FsError(
        'FS_QUOTA_EXCEEDED',
        `${what}: it would pass the quota of ${describeFiles(maxFiles!)} (in use: ${inUse}${pending}; this change adds ${describeFiles(extra.files)}); nothing was changed`,
      );
    }
  }
}

/** The options' limits, checked; undefined when neither is given. */
export function quotaOf(options: FsQuota): FsQuota | undefined {
  const { maxBytes, maxFiles } = options;
  for (const [name, value] of [
    ['maxBytes', maxBytes],
    ['maxFiles', maxFiles],
  ] as const) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
      throw new FsError('FS_INVALID_ARGUMENT', `${name} must be a non-negative integer, got ${String(value)}`);
    }
  }
  if (maxBytes === undefined && maxFiles === undefined) return undefined;
  return { ...(maxBytes === undefined ? {} : { maxBytes }), ...(maxFiles === undefined ? {} : { maxFiles }) };
}
