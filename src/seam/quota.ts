import { posix } from 'node:path';
import { FsError, isFsError } from './errors.js';
import { NOTHING, countedFigures, minus, oneFile, plus, viewFigures } from './quota-figures.js';
import { QuotaLedger, type Claim, type FsQuota } from './quota-ledger.js';
import type { FsChange, FsOpOptions, FsProvider, FsTarget, FsUsage } from './types.js';

export { quotaOf, type FsQuota } from './quota-ledger.js';

/** What the rest of the seam asks of a quota: a change of many files checked as a whole. */
export interface QuotaGuard {
  /** Checks `changes` together and holds their share while `fn` makes them one by one (unchecked). */
  wholeChanges<T>(changes: readonly FsChange[], options: FsOpOptions, fn: () => Promise<T>): Promise<T>;
}

/**
 * Q1: `provider` with every change that can add to what the store holds checked against `limits`
 * first, refused whole with FS_QUOTA_EXCEEDED, before anything is written. Reads pass through.
 * A native `editText` is left out, so that an edit goes through the checked write.
 */
export function withQuota(provider: FsProvider, limits: FsQuota): { provider: FsProvider; guard: QuotaGuard } {
  const ledger = new QuotaLedger(provider, limits);
  const counted = (t: FsTarget, signal: AbortSignal | undefined) => countedFigures(provider, t, signal);
  const guarded: Guarded = async (what, signal, delta, op, applied, blocked) => {
    const mark = await ledger.begin(signal);
    let claim: Claim;
    try {
      claim = ledger.claim(mark, await delta(), what);
    } catch (err) {
      // A change that could not be made anyway fails as it would without a quota.
      if (blocked !== undefined && isFsError(err, 'FS_QUOTA_EXCEEDED')) throw (await blocked()) ?? err;
      throw err;
    }
    let ok = false;
    try {
      const result = await op(claim);
      ok = applied(result);
      return result;
    } finally {
      ledger.end(claim, ok);
    }
  };
  const q: Quoted = { provider, ledger, storeCounts: ledger.storeCounts, counted, guarded };
  const guard: QuotaGuard = {
    async wholeChanges(changes, options, fn) {
      const delta = async () => {
        let sum = NOTHING;
        for (const c of changes) {
          const after = c.kind === 'remove' ? NOTHING : oneFile(c.bytes.byteLength);
          const before = c.kind === 'move' ? plus(await counted(c.from, options.signal), await counted(c.to, options.signal)) : await counted(c.target, options.signal);
          sum = plus(sum, minus(after, before));
        }
        return sum;
      };
      const written = changes.flatMap((c) => (c.kind === 'write' ? [c.target] : []));
      const blocked = () => unwritable(provider, written, 'cannot apply the changes', options.signal);
      // The parts count themselves as they are made; the whole only holds the room meanwhile.
      return guarded('cannot apply the changes', options.signal, delta, () => ledger.whole(fn), () => false, blocked);
    },
  };
  return { provider: delegate(provider, { ...fileOverrides(q), ...treeOverrides(q) }), guard };
}

/**
 * Runs `op` with `delta` (computed first) claimed; `applied` tells whether its result made the
 * change. Where the claim is refused, `blocked` may give the error the change fails with whatever
 * the quota.
 */
type Guarded = <R>(
  what: string,
  signal: AbortSignal | undefined,
  delta: () => Promise<FsUsage>,
  op: (claim: Claim) => Promise<R>,
  applied: (r: R) => boolean,
  blocked?: () => Promise<FsError | undefined>,
) => Promise<R>;

/**
 * Why writing bytes at one of `targets` fails whatever the quota (the contract of `swap`): a
 * directory or special file there (FS_NOT_REGULAR_FILE), or, where nothing is there, a parent that
 * is not a directory (FS_NOT_DIRECTORY); undefined when nothing stands in the way. Asked only of a
 * change the quota refuses, so its lookups cost nothing otherwise.
 */
async function unwritable(provider: FsProvider, targets: readonly FsTarget[], what: string, signal: AbortSignal | undefined): Promise<FsError | undefined> {
  const typeAt = async (target: FsTarget) => {
    try {
      return (await provider.stat(target, { signal, unversioned: true }))?.type ?? 'absent';
    } catch (err) {
      return isFsError(err, 'FS_NOT_DIRECTORY') ? 'below a file' : 'unknown';
    }
  };
  for (const target of targets) {
    const type = await typeAt(target);
    if (type === 'directory' || type === 'other') return new FsError('FS_NOT_REGULAR_FILE', `${what}: "${target.displayPath}" is not a regular file`);
    if (type !== 'absent' && type !== 'below a file') continue;
    // The nearest parent that is there decides (display paths are the canonical paths resolved).
    for (let dir = posix.dirname(target.displayPath); posix.isAbsolute(dir); dir = posix.dirname(dir)) {
      const parent = await provider.resolve(dir, { signal }).catch(() => undefined);
      const at = parent === undefined ? 'unknown' : await typeAt(parent);
      if (at === 'file' || at === 'other') return new FsError('FS_NOT_DIRECTORY', `${what}: "${dir}" is not a directory`);
      if ((at !== 'absent' && at !== 'below a file') || dir === '/') break;
    }
  }
  return undefined;
}

/** What the checked members share. */
interface Quoted {
  readonly provider: FsProvider;
  readonly ledger: QuotaLedger;
  /** The store gives its own figures (`usage`); otherwise the view is what is counted. */
  readonly storeCounts: boolean;
  counted(target: FsTarget, signal: AbortSignal | undefined): Promise<FsUsage>;
  readonly guarded: Guarded;
}

const swapped = (r: { readonly ok: boolean }) => r?.ok === true;
const done = () => true;

/** The members that publish a file's bytes: each claims the new size less what the store held there. */
function fileOverrides({ provider, ledger, counted, guarded }: Quoted): Partial<FsProvider> {
  return {
    swap(target, request) {
      const what = request.bytes === null ? `cannot remove "${target.displayPath}"` : `cannot write "${target.displayPath}"`;
      const after = request.bytes === null ? NOTHING : oneFile(request.bytes.byteLength);
      const blocked = request.bytes === null ? undefined : () => unwritable(provider, [target], what, request.signal);
      return guarded(what, request.signal, async () => minus(after, await counted(target, request.signal)), () => provider.swap(target, request), swapped, blocked);
    },

    applyBatch(swaps, options) {
      const delta = async () => {
        let sum = NOTHING;
        for (const s of swaps) sum = plus(sum, minus(s.bytes === null ? NOTHING : oneFile(s.bytes.byteLength), await counted(s.target, options.signal)));
        return sum;
      };
      const written = swaps.filter((s) => s.bytes !== null).map((s) => s.target);
      const blocked = () => unwritable(provider, written, 'cannot apply the changes', options.signal);
      return guarded('cannot apply the changes', options.signal, delta, () => provider.applyBatch!(swaps, options), swapped, blocked);
    },

    swapFrom(target, request) {
      const what = `cannot write "${target.displayPath}"`;
      let before = NOTHING;
      const delta = async () => minus(oneFile(0), (before = await counted(target, request.signal)));
      const source = (claim: Claim) => metered(request.source, (n) => ledger.grow(claim, minus(oneFile(n), before), what));
      const blocked = () => unwritable(provider, [target], what, request.signal);
      return guarded(what, request.signal, delta, (claim) => provider.swapFrom!(target, { ...request, source: source(claim) }), swapped, blocked);
    },

    modify(target, request, change) {
      const what = `cannot write "${target.displayPath}"`;
      let before = NOTHING;
      const delta = async () => minus(oneFile(0), (before = await counted(target, request.signal)));
      const checked = (claim: Claim) => (current: Parameters<typeof change>[0]) => {
        const bytes = change(current);
        ledger.grow(claim, minus(oneFile(bytes.byteLength), before), what);
        return bytes;
      };
      const blocked = () => unwritable(provider, [target], what, request.signal);
      return guarded(what, request.signal, delta, (claim) => provider.modify!(target, request, checked(claim)), swapped, blocked);
    },
  };
}

/**
 * Moves, removals of trees, links and modes. A store that counts for itself may take in what only
 * showed through (an overlay copies a lower file up): such a change adds what the view shows less
 * what the store held.
 */
function treeOverrides({ provider, storeCounts, counted, guarded }: Quoted): Partial<FsProvider> {
  const out: Partial<FsProvider> = {
    rename(from, to, options) {
      const { signal } = options;
      const delta = async () => {
        const replaced = await counted(to, signal);
        if (!storeCounts) return minus(NOTHING, replaced);
        return minus(minus(await viewFigures(provider, from, signal), await counted(from, signal)), replaced);
      };
      return guarded(`cannot move "${from.displayPath}" to "${to.displayPath}"`, signal, delta, () => provider.rename(from, to, options), done);
    },

    rmdir(target, options) {
      if (storeCounts) return provider.rmdir(target, options);
      const delta = async () => (options.recursive ? minus(NOTHING, await counted(target, options.signal)) : NOTHING);
      return guarded(`cannot remove directory "${target.displayPath}"`, options.signal, delta, () => provider.rmdir(target, options), done);
    },
  };
  const { setExecutable, symlink, removeLink, renameLink } = provider;
  if (setExecutable && storeCounts) {
    out.setExecutable = (target, executable, options) => {
      const delta = async () => minus(await viewFigures(provider, target, options.signal), await counted(target, options.signal));
      return guarded(`cannot change the mode of "${target.displayPath}"`, options.signal, delta, () => setExecutable.call(provider, target, executable, options), done);
    };
  }
  if (symlink) {
    out.symlink = (target, text, options) =>
      guarded(`cannot create the link "${target.displayPath}"`, options.signal, async () => oneFile(0), () => symlink.call(provider, target, text, options), done);
  }
  if (removeLink && !storeCounts) {
    out.removeLink = (target, options) =>
      guarded(`cannot remove the link "${target.displayPath}"`, options.signal, async () => minus(NOTHING, oneFile(0)), () => removeLink.call(provider, target, options), done);
  }
  if (renameLink) {
    out.renameLink = (from, to, options) => {
      const delta = async () => {
        const replaced = options.replace ? await entryAt(provider, counted, to, options.signal) : NOTHING;
        if (!storeCounts) return minus(NOTHING, replaced);
        return minus(minus(oneFile(0), await counted(from, options.signal)), replaced);
      };
      return guarded(`cannot move the link "${from.displayPath}" to "${to.displayPath}"`, options.signal, delta, () => renameLink.call(provider, from, to, options), done);
    };
  }
  return out;
}

/** A link, or what the store holds at `target`: a link's own name holds one file. */
async function entryAt(provider: FsProvider, counted: Quoted['counted'], target: FsTarget, signal: AbortSignal | undefined): Promise<FsUsage> {
  if (provider.readlink) {
    try {
      await provider.readlink(target, { signal });
      return oneFile(0);
    } catch (err) {
      if (isFsError(err, 'FS_NOT_FOUND')) return NOTHING;
      if (!isFsError(err, 'FS_INVALID_ARGUMENT')) throw err;
    }
  }
  return counted(target, signal);
}

/** `source`, telling `seen` the bytes read so far before handing each chunk on. */
async function* metered(source: AsyncIterable<Uint8Array>, seen: (bytes: number) => void): AsyncIterable<Uint8Array> {
  let n = 0;
  for await (const chunk of source) {
    n += chunk.byteLength;
    seen(n);
    yield chunk;
  }
}

/**
 * `provider` with `overrides` in place of its own members (only where it has them, so what it
 * lacks stays absent) and no native edit. Its own methods are called on it, not on the wrapper.
 */
function delegate(provider: FsProvider, overrides: Partial<FsProvider>): FsProvider {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(provider, {
    get(target, key) {
      if (key === 'editText') return undefined;
      const own = Reflect.get(target, key) as unknown;
      if (own !== undefined && Object.prototype.hasOwnProperty.call(overrides, key)) return overrides[key as keyof FsProvider];
      if (typeof own !== 'function') return own;
      let fn = bound.get(key);
      if (fn === undefined || (fn as { inner?: unknown }).inner !== own) {
        fn = Object.assign((own as (...a: unknown[]) => unknown).bind(target), { inner: own });
        bound.set(key, fn);
      }
      return fn;
    },
    has(target, key) {
      return key === 'editText' ? false : Reflect.has(target, key);
    },
  });
}
