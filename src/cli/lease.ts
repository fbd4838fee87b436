import { setTimeout as delay } from 'node:timers/promises';
import type { FileSystem, FsWalkEntry } from '../seam/index.js';
import type { Workspace } from './workspace.js';

/**
 * How long a burst of calls keeps the sandbox to itself before it asks whether anyone else waits
 * (and again each time after, while nobody does), and how long an idle one keeps it.
 */
const MAX_HOLD_MS = 1000;
const IDLE_MS = 20;
/**
 * After a lease held to MAX_HOLD_MS, the next waits this long: longer than the lock's longest
 * poll interval (200 ms), so a process waiting for the lock gets it even under constant load.
 */
const YIELD_MS = 250;

/** The labels a sandbox gives the checkpoints of the changes made through the lease. */
export interface ChangeLabel {
  readonly owner?: string;
  readonly source?: string;
}

interface Labelled {
  label<T>(label: ChangeLabel, fn: () => Promise<T>): Promise<T>;
}

interface Lease {
  readonly fs: FileSystem;
  /** Held MAX_HOLD_MS with another taker waiting (or none known to be not): let go at once. */
  due: boolean;
  /** The next check of whether another taker waits. */
  turn: NodeJS.Timeout | undefined;
  active: number;
  closing: boolean;
  timer: NodeJS.Timeout | undefined;
  end(): void;
}

/**
 * A FileSystem whose calls run through the workspace (in a sandbox: under the state lock, on the
 * sandbox as other processes left it). A mounted program makes thousands of calls, so one take
 * of the lock serves a burst of them: it is let go after IDLE_MS without calls, or once it has
 * been held MAX_HOLD_MS while another call waits for it, so "dsh-fs status" or "commit" from
 * another terminal gets its turn; with nobody waiting, a long burst keeps it.
 */
export function leasedFs(workspace: Workspace, current: FileSystem, label?: ChangeLabel): FileSystem & { close(): void } {
  let lease: Lease | undefined;
  let pending: Promise<Lease> | undefined;
  let yieldUntil = 0;

  const finish = (l: Lease) => {
    if (l.timer !== undefined) clearTimeout(l.timer);
    if (l.turn !== undefined) clearTimeout(l.turn);
    l.closing = true;
    if (lease === l) lease = undefined;
    if (l.due) yieldUntil = Date.now() + YIELD_MS;
    l.end();
  };
  const becomeDue = (l: Lease) => {
    if (l.closing) return;
    l.due = true;
    if (l.active === 0) finish(l);
  };
  // Each MAX_HOLD_MS: let go when another taker waits (or the workspace cannot tell), else keep on.
  const armTurn = (l: Lease) => {
    l.turn = setTimeout(() => {
      l.turn = undefined;
      if (l.closing) return;
      if (workspace.contended === undefined) return becomeDue(l);
      workspace.contended().then(
        (wanted) => (wanted ? becomeDue(l) : l.closing || armTurn(l)),
        () => becomeDue(l),
      );
    }, MAX_HOLD_MS);
    l.turn.unref();
  };
  const acquire = async () => {
    const wait = yieldUntil - Date.now();
    if (wait > 0) await delay(wait);
    return new Promise<Lease>((resolve, reject) => {
      workspace
        .use(
          (fs) =>
            new Promise<void>((end) => {
              lease = { fs, due: false, turn: undefined, active: 0, closing: false, timer: undefined, end };
              armTurn(lease);
              resolve(lease);
            }),
        )
        .catch(reject);
    });
  };
  const take = async (): Promise<Lease> => {
    for (;;) {
      const l = lease;
      if (l !== undefined && !l.closing && !l.due) return l;
      if (l !== undefined && !l.closing) {
        l.closing = true;
        if (l.active === 0) finish(l);
      }
      pending ??= acquire().finally(() => (pending = undefined));
      await pending;
    }
  };
  const run = async <T>(fn: (fs: FileSystem) => Promise<T>): Promise<T> => {
    const l = await take();
    if (l.timer !== undefined) clearTimeout(l.timer);
    l.timer = undefined;
    l.active++;
    try {
      // A sandbox labels each change's checkpoint with where it came from (the mount, the command run).
      const labelled = label === undefined ? undefined : (l.fs as Partial<Labelled>).label;
      return await (labelled === undefined ? fn(l.fs) : labelled.call<FileSystem, [ChangeLabel, () => Promise<T>], Promise<T>>(l.fs, label!, () => fn(l.fs)));
    } finally {
      if (--l.active === 0) {
        if (l.closing || l.due) finish(l);
        else l.timer = setTimeout(() => finish(l), IDLE_MS);
      }
    }
  };

  const OPTIONAL = ['setExecutable', 'symlink', 'readlink', 'removeLink', 'renameLink', 'writeBytesFrom'] as const;
  const through =
    <K extends keyof FileSystem>(name: K) =>
    (...args: unknown[]) =>
      run((fs) => (fs[name] as (...a: unknown[]) => Promise<unknown>).apply(fs, args));
  return {
    cwd: current.cwd,
    ...(current.root === undefined ? {} : { root: current.root }),
    contains: (parent, child) => current.contains(parent, child),
    childKey: (parent, name) => current.childKey(parent, name),
    resolve: through('resolve'),
    stat: through('stat'),
    readText: through('readText'),
    streamText: through('streamText'),
    readBytes: through('readBytes'),
    streamBytes: through('streamBytes'),
    listDir: through('listDir'),
    writeText: through('writeText'),
    writeBytes: through('writeBytes'),
    editText: through('editText'),
    remove: through('remove'),
    mkdir: through('mkdir'),
    rmdir: through('rmdir'),
    rename: through('rename'),
    // The optional operations, where the sandbox has them (a mount asks for them by presence).
    ...(current.flush === undefined ? {} : { flush: through('flush') }),
    ...Object.fromEntries(OPTIONAL.filter((name) => current[name] !== undefined).map((name) => [name, through(name)])),
    async *walk(target, options) {
      yield* await run(async (fs) => {
        const all: FsWalkEntry[] = [];
        for await (const entry of fs.walk(target, options)) all.push(entry);
        return all;
      });
    },
    close: () => {
      if (lease !== undefined && lease.active === 0) finish(lease);
      else if (lease !== undefined) lease.closing = true;
    },
  } as FileSystem & { close(): void };
}
