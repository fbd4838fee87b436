import { FsError } from './errors.js';
import type { FsProvider, FsTarget, FsTargetKey } from './types.js';

/**
 * The root as the provider keys it. A target's key need not be its path (a provider may key by
 * row, inode or prefixed path), so the root's key is learnt the one way that holds for every
 * scheme: by resolving the root's path through the provider. Asked once, on the first removal or
 * move; a failed lookup is not remembered. Keys are stable identities (the seam's locks rely on it
 * too), so the answer stays right for the filesystem's life.
 */
export class RootGuard {
  #key: Promise<FsTargetKey> | undefined;

  constructor(
    private readonly provider: FsProvider,
    /** The canonical root path, or `/`. */
    private readonly path: string,
  ) {}

  /** Whether `target` is the root. */
  async is(target: FsTarget): Promise<boolean> {
    return target.targetKey === (await this.key());
  }

  /** FS_INVALID_ARGUMENT when any of `targets` is the root: it is never removed, moved or replaced. */
  async refuse(what: string, why: string, ...targets: readonly FsTarget[]): Promise<void> {
    const key = await this.key();
    if (targets.some((t) => t.targetKey === key)) throw new FsError('FS_INVALID_ARGUMENT', `${what}: ${why}`);
  }

  private key(): Promise<FsTargetKey> {
    this.#key ??= this.lookup().catch((err: unknown) => {
      this.#key = undefined;
      throw err;
    });
    return this.#key;
  }

  private async lookup(): Promise<FsTargetKey> {
    // No caller's signal: one caller's abort must not fail a lookup that others share.
    const target = await this.provider.resolve(this.path, {});
    if (typeof target?.targetKey !== 'string' || target.targetKey.length === 0) {
      throw new FsError('FS_IO_ERROR', `the provider resolved its root "${this.path}" to no target`);
    }
    return target.targetKey;
  }
}
