import { mkdir, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createLocalFs, type LocalFileSystem } from '../backends/local/index.js';
import { createOverlayFs, type OverlayFileSystem, type OverlayRecovery } from '../backends/overlay/index.js';
import { toFsError, type FileSystem, type FsQuota } from '../seam/index.js';
import type { StateLockOptions } from '../sandbox/lock.js';
import { lockedOverlay, STATE_DOCUMENT } from '../sandbox/locked.js';
import { UsageError, type Command } from './args.js';
import { relativeInside } from '../seam/path.js';
import { defaultStateDir, realpathOfNearest } from '../sandbox/state.js';

export { defaultStateDir };

export type Mode = 'sandbox' | 'direct';

/** `--root`: must be an existing directory; the rest of the tool works on its real path. */
export async function resolveRoot(dir: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(resolve(dir));
  } catch {
    throw new UsageError(`--root "${dir}": no such directory`);
  }
  if (!(await stat(real)).isDirectory()) throw new UsageError(`--root "${dir}": not a directory`);
  return real;
}

/**
 * `--state` (or the default) as a real path, refused when it lies inside the (real) root. Where it
 * really is decides, not its spelling: `ROOT/link/st` with `link` leading outside the root is
 * outside, a link from elsewhere into the root is inside. The real path is what is used from then
 * on, so a link changed later cannot move the state into the root.
 */
export async function resolveStateDir(
  root: string,
  given: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  option: { readonly flag?: '--state' | '--into'; readonly command?: Command } = {},
): Promise<string> {
  const dir = given === undefined ? defaultStateDir(root, env) : resolve(given);
  const real = await realpathOfNearest(dir);
  if (relativeInside(root, real) !== undefined) {
    // The agent could otherwise read and rewrite the sandbox's own bookkeeping through the tools.
    const flag = option.flag ?? '--state';
    const whose = flag === '--into' ? "the fork's state" : 'the sandbox state';
    throw new UsageError(`${flag} "${given ?? dir}" lies inside --root "${root}"; keep ${whose} outside the directory it protects`, option.command);
  }
  return real;
}

/** Whether a sandbox state document exists (without creating the directory). */
export async function hasSandboxState(stateDir: string): Promise<boolean> {
  return (await stat(join(stateDir, STATE_DOCUMENT)).catch(() => undefined))?.isFile() === true;
}

export function openLower(root: string, quota: FsQuota = {}): LocalFileSystem {
  return createLocalFs({ root, ...quota });
}

/**
 * `quota`: what the sandbox may hold. `onRecovered`: told, in one line each, what the open did
 * about a commit a killed process left unfinished.
 */
export function openSandbox(lower: FileSystem, stateDir: string, options: { quota?: FsQuota; onRecovered?: (line: string) => void } = {}): Promise<OverlayFileSystem> {
  const { quota = {}, onRecovered } = options;
  return createOverlayFs({ lower, stateDir, ...quota, ...(onRecovered === undefined ? {} : { onRecovered: (r: OverlayRecovery) => onRecovered(`${r.message} (in ${lower.root ?? '/'})`) }) });
}

/** What the server works on: the real directory, or a sandbox over it kept in a state directory. */
export interface Workspace {
  readonly mode: Mode;
  readonly root: string;
  readonly stateDir: string | undefined;
  /**
   * Runs `fn` with the current filesystem. In a sandbox, calls run one at a time, hold the
   * state's cross-process lock, and see what other processes (a commit, a discard) did before.
   */
  use<T>(fn: (fs: FileSystem) => Promise<T>, options?: StateLockOptions): Promise<T>;
  /**
   * Whether a `use` is waiting (in this process or another) for the one running now. Absent:
   * unknown, so a holder of long bursts lets go regularly anyway.
   */
  contended?(): Promise<boolean>;
}

export async function openWorkspace(options: { root: string; mode: Mode; stateDir?: string; quota?: FsQuota; onRecovered?: (line: string) => void }): Promise<Workspace> {
  const { root, mode, quota = {} } = options;
  // The quota holds what this process writes: into the directory in direct mode, else into the sandbox.
  const lower = openLower(root, mode === 'direct' ? quota : {});
  if (mode === 'direct') {
    return { mode, root, stateDir: undefined, use: (fn) => fn(lower) };
  }
  const stateDir = options.stateDir;
  if (stateDir === undefined) throw new UsageError('a sandbox needs a state directory');

  const locked = lockedOverlay(stateDir, () =>
    openSandbox(lower, stateDir, { quota, ...(options.onRecovered === undefined ? {} : { onRecovered: options.onRecovered }) }),
  );
  const use = <T>(fn: (fs: FileSystem) => Promise<T>, lockOptions: StateLockOptions = {}) => locked.use(fn, lockOptions);
  const contended = () => locked.contended();

  // Opens the state now, so a bad state directory fails at startup rather than on the first call.
  await mkdirState(stateDir);
  await use(async () => undefined);
  return { mode, root, stateDir, use, contended };
}

export async function mkdirState(stateDir: string): Promise<void> {
  try {
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw toFsError(err, `cannot create the sandbox state directory "${stateDir}"`);
  }
}
