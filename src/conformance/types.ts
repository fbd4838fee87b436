import type { FileSystem, FsProvider } from '../seam/index.js';

/** Changes made behind the seam's back, as another process or an editor would. */
export interface OutOfBandHooks {
  /** Write exact bytes at an absolute path (creating parents). With `keepMtime`, restore the old mtime afterwards. */
  writeBytes(path: string, bytes: Uint8Array, options?: { readonly keepMtime?: boolean }): Promise<void>;
  /** Remove the file at an absolute path. */
  remove(path: string): Promise<void>;
  /**
   * Read exact bytes at an absolute path, or undefined when absent. Optional: lets P2 check that
   * nothing outside the root was changed through an escaping link.
   */
  readBytes?(path: string): Promise<Uint8Array | undefined>;
}

/** Storage setups the suite needs for some rules; absent hooks skip those rules. */
export interface SetupHooks {
  mkdir?(path: string): Promise<void>;
  /** Create a symlink at `path` whose text is `target`. Required by capability `symlinks`. */
  symlink?(target: string, path: string): Promise<void>;
  /** Create a FIFO at `path`. Enables the T2 FIFO case. */
  mkfifo?(path: string): Promise<void>;
}

export interface ConformanceCapabilities {
  /** The provider supports symlinks (via `setup.symlink`): the link cases of P2, P3, P4, D4 and R2 run. */
  readonly symlinks?: boolean;
  /** `symlink`, `readlink`, `removeLink` and `renameLink` create, read, remove and move links (K1 and K2 run). */
  readonly linkCreation?: boolean;
  /** The store keeps an executable bit (`setExecutable`, `executable` in stat and listings): X1 runs. */
  readonly executable?: boolean;
  /** Identical bytes keep their version (V2). Default true. */
  readonly stableVersions?: boolean;
}

export interface ConformanceSubject {
  readonly fs: FileSystem;
  /**
   * The provider behind `fs`, when there is one. Enables G7 (its swap is checked directly) and
   * makes the concurrency rules (G2, G3, G5, G6, G8, D3, R1) run every call through a seam of its
   * own over it, as calls from separate processes would: then only the provider's own atomicity
   * keeps them apart, which is what a store shared by many machines must provide.
   */
  readonly provider?: FsProvider;
  /**
   * For layered filesystems (an overlay): the layer beneath `fs`, which must not change before a
   * commit. Enables O1.
   */
  readonly lower?: FileSystem;
  /** An existing, empty directory (absolute) in which the suite creates everything. */
  readonly base: string;
  /**
   * For rooted providers: an absolute directory outside the root that the suite may populate
   * through `outside` hooks to check that nothing there is read or changed (P2).
   */
  readonly outsideDir?: string;
  readonly outOfBand?: OutOfBandHooks;
  readonly setup?: SetupHooks;
  readonly capabilities?: ConformanceCapabilities;
  /** Release resources (temporary directories). */
  cleanup?(): Promise<void>;
}

export type ConformanceFactory = () => Promise<ConformanceSubject> | ConformanceSubject;

export interface ConformanceOptions {
  /**
   * fast-check runs for the cheapest properties; heavier ones scale down from it.
   * Default 40, or `DSH_FS_CONFORMANCE_RUNS`.
   */
  readonly numRuns?: number;
  /** fast-check seed, for replaying a failure. Default random, or `DSH_FS_CONFORMANCE_SEED`. */
  readonly seed?: number;
  /** fast-check path printed with a failure, used with `seed` to replay it. Or `DSH_FS_CONFORMANCE_PATH`. */
  readonly path?: string;
  /**
   * Shrink a failing case to a minimal one (default true). False stops at the first failure,
   * which is faster when only pass/fail matters. Or `DSH_FS_CONFORMANCE_SHRINK=0`.
   */
  readonly shrink?: boolean;
  /** Rule ids not to run (reported as skipped). */
  readonly skip?: readonly string[];
  /** Per-rule timeout for `describeConformance`, in milliseconds. Default 120000. */
  readonly timeout?: number;
}

export interface RuleInfo {
  readonly id: string;
  readonly title: string;
}

export interface RuleResult extends RuleInfo {
  readonly status: 'pass' | 'fail' | 'skip';
  /** Why it failed, with the fast-check seed and path to replay it. */
  readonly error?: string;
  /** Why it was skipped. */
  readonly reason?: string;
}
