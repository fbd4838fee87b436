import { FsError } from './errors.js';
import { KeyedMutex } from './lock.js';
import { createMutate, type Mutate } from './mutate.js';
import { RootGuard } from './root.js';
import { canonicalPath, describeType, isWithin } from './path.js';
import { reservedNameCheck, type ReservedCheck } from './reserved.js';
import { quotaOf, withQuota, type FsQuota, type QuotaGuard } from './quota.js';
import type { FsProvider, FsTarget } from './types.js';

export interface CreateFsOptions extends FsQuota {
  /** Default directory for relative paths (default: the provider's cwd, else its root, else `/`). */
  readonly cwd?: string;
  /** Largest file readText/streamText/editText will load, in bytes (default 256 MiB). */
  readonly maxTextBytes?: number;
}

export const DEFAULT_MAX_TEXT_BYTES = 256 * 1024 * 1024;

/** What every part of a filesystem made by createFs shares: the provider, its root, the locks. */
export interface FsContext {
  readonly provider: FsProvider;
  /** The canonical root, or undefined when the provider declares none. */
  readonly root: string | undefined;
  /** The canonical default directory for relative paths. */
  readonly cwd: string;
  /** Names the storage keeps for itself: no caller path, and no target, may name one. */
  readonly reserved: ReservedCheck | undefined;
  readonly maxTextBytes: number;
  /** The per-target critical section of every mutation made through this filesystem. */
  readonly locks: KeyedMutex;
  readonly mutate: Mutate;
  readonly rootGuard: RootGuard;
  /** Present under a quota (`maxBytes`, `maxFiles`); `provider` then checks every change against it. */
  readonly quota: QuotaGuard | undefined;
  /** A target as resolve gives it; its key (a path, for a provider that reserves names) names nothing reserved. */
  checkTarget(target: unknown): asserts target is FsTarget;
  /** checkTarget of each, with the directory shared by consecutive targets checked once. */
  checkTargets(targets: readonly unknown[]): asserts targets is readonly FsTarget[];
}

/** Checks the options and builds the context (root and cwd canonicalised once, here). */
export function createFsContext(given: FsProvider, options: CreateFsOptions): FsContext {
  const limits = quotaOf(options);
  const { provider, guard: quota } = limits === undefined ? { provider: given, guard: undefined } : withQuota(given, limits);
  const root = provider.root === undefined ? undefined : canonicalPath(provider.root, '/');
  const cwd = canonicalPath(options.cwd ?? provider.cwd ?? root ?? '/', '/');
  if (root !== undefined && !isWithin(root, cwd)) {
    throw new FsError('FS_OUTSIDE_ROOT', `cwd "${cwd}" is outside the root "${root}"`);
  }
  const reserved = reservedNameCheck(provider, root);
  reserved?.(cwd, cwd);
  const maxTextBytes = options.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES;
  const locks = new KeyedMutex();
  return {
    provider,
    root,
    cwd,
    reserved,
    maxTextBytes,
    locks,
    mutate: createMutate(provider, locks, maxTextBytes),
    rootGuard: new RootGuard(provider, root ?? '/'),
    quota,
    checkTarget(target: unknown): asserts target is FsTarget {
      checkTargetShape(target);
      reserved?.(target.targetKey, target.displayPath);
    },
    checkTargets(targets: readonly unknown[]): asserts targets is readonly FsTarget[] {
      let dir: string | undefined;
      for (const target of targets) {
        checkTargetShape(target);
        if (reserved === undefined) continue;
        const key = target.targetKey;
        // In the directory of the one before (the common case, tested without searching the key from its end).
        if (dir !== undefined && key.length > dir.length + 1 && key.charCodeAt(dir.length) === 47 && key.startsWith(dir) && key.indexOf('/', dir.length + 1) === -1) {
          if (reserved.names.test(key.slice(dir.length + 1))) reserved(key, target.displayPath);
          continue;
        }
        const cut = key.lastIndexOf('/');
        reserved(key, target.displayPath);
        dir = cut <= 0 ? undefined : key.slice(0, cut);
      }
    },
  };
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
