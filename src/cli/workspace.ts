import { hash } from 'node:crypto';
import { mkdir, readFile, readlink, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { createLocalFs, type LocalFileSystem } from '../backends/local/index.js';
import { createOverlayFs, type OverlayFileSystem, type OverlayRecovery } from '../backends/overlay/index.js';
import { KeyedMutex, toFsError, type FileSystem } from '../seam/index.js';
import { lockWanted, withStateLock, type StateLockOptions } from './lock.js';
import { UsageError } from './args.js';
import { relativeInside } from '../seam/path.js';

export type Mode = 'sandbox' | 'direct';

/** The overlay's state document, as the overlay backend names it. */
const STATE_DOCUMENT = 'overlay.json';
const STATE_JOURNAL = 'overlay.journal';

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
 * Where a sandbox over `root` keeps its upper layer by default: outside the root, in the user's
 * state directory, one directory per root (its real path, hashed).
 */
export function defaultStateDir(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  // The XDG spec says to ignore a relative value.
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.local', 'state');
  return join(base, 'dsh-fs', hash('sha256', root, 'hex').slice(0, 16));
}

/**
 * `--state` (or the default) as a real path, refused when it lies inside the (real) root. Where it
 * really is decides, not its spelling: `ROOT/link/st` with `link` leading outside the root is
 * outside, a link from elsewhere into the root is inside. The real path is what is used from then
 * on, so a link changed later cannot move the state into the root.
 */
export async function resolveStateDir(root: string, given: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = given === undefined ? defaultStateDir(root, env) : resolve(given);
  const real = await realpathOfNearest(dir);
  if (relativeInside(root, real) !== undefined) {
    // The agent could otherwise read and rewrite the sandbox's own bookkeeping through the tools.
    throw new UsageError(`--state "${given ?? dir}" lies inside --root "${root}"; keep the sandbox state outside the directory it protects`);
  }
  return real;
}

/**
 * realpath of the deepest existing ancestor, with the rest appended (the directory may not exist
 * yet). A dangling link on the way is followed through its text, as mkdir would follow it.
 */
async function realpathOfNearest(path: string, hops = 0): Promise<string> {
  const rest: string[] = [];
  let p = path;
  for (;;) {
    try {
      return join(await realpath(p), ...rest.reverse());
    } catch {
      const text = hops < 40 ? await readlink(p).catch(() => undefined) : undefined;
      if (text !== undefined) return realpathOfNearest(join(resolve(dirname(p), text), ...rest.reverse()), hops + 1);
      const parent = dirname(p);
      if (parent === p) return path;
      rest.push(basename(p));
      p = parent;
    }
  }
}

/** Whether a sandbox state document exists (without creating the directory). */
export async function hasSandboxState(stateDir: string): Promise<boolean> {
  return (await stat(join(stateDir, STATE_DOCUMENT)).catch(() => undefined))?.isFile() === true;
}

export function openLower(root: string): LocalFileSystem {
  return createLocalFs({ root });
}

/** `onRecovered`: told, in one line each, what the open did about a commit a killed process left unfinished. */
export function openSandbox(lower: FileSystem, stateDir: string, onRecovered?: (line: string) => void): Promise<OverlayFileSystem> {
  return createOverlayFs({ lower, stateDir, ...(onRecovered === undefined ? {} : { onRecovered: (r: OverlayRecovery) => onRecovered(`${r.message} (in ${lower.root ?? '/'})`) }) });
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

export async function openWorkspace(options: { root: string; mode: Mode; stateDir?: string; onRecovered?: (line: string) => void }): Promise<Workspace> {
  const { root, mode } = options;
  const lower = openLower(root);
  if (mode === 'direct') {
    return { mode, root, stateDir: undefined, use: (fn) => fn(lower) };
  }
  const stateDir = options.stateDir;
  if (stateDir === undefined) throw new UsageError('a sandbox needs a state directory');

  const serial = new KeyedMutex();
  let overlay: OverlayFileSystem | undefined;
  let stamp: string | undefined;

  // The state is a document plus a journal of the changes since it (format 3): both, in order.
  const stampNow = async () => {
    const bytes = await readFile(join(stateDir, STATE_DOCUMENT)).catch(() => undefined);
    if (bytes === undefined) return 'absent';
    const journal = await readFile(join(stateDir, STATE_JOURNAL)).catch(() => undefined);
    return `${hash('sha256', bytes, 'hex')}:${journal === undefined ? 'none' : hash('sha256', journal, 'hex')}`;
  };

  let queued = 0;
  const use = <T>(fn: (fs: FileSystem) => Promise<T>, lockOptions: StateLockOptions = {}) => {
    queued++;
    let counted = true;
    const entered = () => {
      if (counted) queued--;
      counted = false;
    };
    return serial.run('', () =>
      withStateLock(
        stateDir,
        async () => {
          entered();
          // Another process may have committed or discarded since: reload the upper layer then.
          const before = await stampNow();
          if (overlay === undefined || before !== stamp) {
            overlay = await openSandbox(lower, stateDir, options.onRecovered);
          }
          try {
            return await fn(overlay);
          } finally {
            stamp = await stampNow();
          }
        },
        lockOptions,
      ),
    ).finally(entered);
  };
  const contended = async () => queued > 0 || (await lockWanted(stateDir).catch(() => true));

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
