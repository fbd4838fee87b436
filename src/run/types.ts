import type { OverlayFileSystem } from '../backends/overlay/index.js';
import type { RunSkipped } from './readback.js';

export type { RunSkipped } from './readback.js';

/**
 * How a run reaches its sandbox: each call of `use` gives the sandbox as it is then (a caller
 * that shares the sandbox with other processes takes its lock there). A run holds it twice,
 * briefly: to take the start, and to import; never while the program runs.
 */
export interface RunSandboxAccess {
  use<T>(fn: (sandbox: OverlayFileSystem) => Promise<T>): Promise<T>;
}

export interface RunOptions {
  /**
   * Scratch space for runs of this sandbox, outside the project folder, on the same filesystem as
   * the sandbox's state if it can be (e.g. a directory next to its state directory): the layer
   * kept between runs, each run's upper and work directories, the program's bytes at conflicts.
   */
  readonly scratchDir: string;
  /** The program's directory: a path in the sandbox (default: the project folder itself). */
  readonly cwd?: string;
  /** The program's environment (default: this process's). GIT_OPTIONAL_LOCKS=0 is added unless set. */
  readonly env?: NodeJS.ProcessEnv;
  /** The program's stdin, stdout and stderr (default `inherit`); with `pipe` the result holds its output. */
  readonly stdio?: 'inherit' | 'ignore' | 'pipe';
  /**
   * Run the program in bubblewrap: the host read-only but for the project, a private writable
   * /tmp and $HOME (discarded at the end). Needs `bwrap` on PATH.
   */
  readonly jail?: boolean;
  /** With `jail`: false gives the program no network (default true). */
  readonly network?: boolean;
  /** The checkpoint's label (default source: `run: ARGV`). */
  readonly label?: { readonly owner?: string; readonly source?: string };
}

/** One path the program changed that the sandbox also changed during the run. */
export interface RunConflict {
  /** The sandbox path (the topmost of what overlaps). */
  readonly path: string;
  /** Where the program's version is kept (absent when the program removed the path). */
  readonly kept?: string;
}

export interface RunResult {
  /** The program's exit status; 128+signal when it was killed. */
  readonly exitCode: number;
  /** Sandbox paths imported, by what the program did (a removed directory counts once). */
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly deleted: readonly string[];
  /** Not imported: the sandbox changed them during the run and keeps its own version. */
  readonly conflicts: readonly RunConflict[];
  /**
   * Set when the import was refused whole (FS_QUOTA_EXCEEDED: the run's files would pass the
   * sandbox's `maxBytes` or `maxFiles`): nothing was imported, the lists above are empty, and all
   * the program wrote is kept in `kept` (absent when it could not be kept).
   */
  readonly refused?: { readonly code: 'FS_QUOTA_EXCEEDED'; readonly message: string; readonly kept?: string };
  /** What the sandbox cannot hold (hard links, FIFOs, sockets, devices, other mode bits): reported, not imported. */
  readonly skipped: readonly RunSkipped[];
  /** The checkpoint the import recorded; absent when nothing was imported. */
  readonly checkpoint?: number;
  /** With `stdio: 'pipe'`: the program's output. */
  readonly stdout?: Buffer;
  readonly stderr?: Buffer;
  /** Milliseconds spent laying out the layer, in the program (with the mount), and importing (reading the upper back, the import, the kept layer taking the run's files). */
  readonly timings: { readonly layer: number; readonly program: number; readonly import: number };
}
