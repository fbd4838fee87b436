/**
 * The CLI over a workspace in a SQLite file (`--sqlite FILE [--workspace NAME]`): serving it
 * directly or through a sandbox kept in the same file (named by `--sandbox`, default the
 * workspace's name), so the review commands work from any process that opens the file.
 */
import { resolve } from 'node:path';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import type { FeedbackStore } from '../review/types.js';
import { KeyedMutex } from '../seam/lock.js';
import type { FileSystem, FsQuota } from '../seam/index.js';
import { UsageError, optionalString, type Command, type Parsed } from './args.js';
import type { StateLockOptions } from '../sandbox/lock.js';
import type { PostgresSandbox } from './postgres.js';
import type { Mode, Workspace } from './workspace.js';
import { lazily } from '../lazy.js';
import { lazyFeedback } from './lazy.js';

// Imported by the commands that open the file, not by every command that checks for --sqlite.
const backend = () => import('../backends/sqlite/index.js');
const overlayBackend = () => import('../backends/overlay/index.js');

export interface SqliteTarget {
  readonly file: string;
  readonly workspace: string;
  readonly sandbox: string;
}

/** `--sqlite`, `--workspace` (default `default`) and `--sandbox`, or undefined when the command works elsewhere. */
export function sqliteTarget(parsed: Parsed, command: Command): SqliteTarget | undefined {
  const file = optionalString(parsed, 'sqlite');
  if (file === undefined) return undefined;
  if (parsed.values.postgres !== undefined) throw new UsageError('--sqlite and --postgres do not go together', command);
  if (parsed.values['against-parent'] !== undefined) throw new UsageError('--against-parent does not go with --sqlite', command);
  for (const name of ['root', 'state']) {
    if (parsed.values[name] !== undefined) throw new UsageError(`--${name} does not go with --sqlite (the workspace and its sandbox are in the file)`, command);
  }
  const workspace = optionalString(parsed, 'workspace') ?? 'default';
  return { file: resolve(file), workspace, sandbox: optionalString(parsed, 'sandbox') ?? workspace };
}

const LOCK_TIMEOUT_MS = 120_000;

function lockOptions(options: StateLockOptions) {
  return {
    timeoutMs: options.timeoutMs ?? LOCK_TIMEOUT_MS,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onWait ? { onWait: () => options.onWait!(undefined) } : {}),
  };
}

/** A sandbox's upper layer in the file, for the review commands. */
export type SqliteSandbox = Omit<PostgresSandbox, 'store'>;

export function sqliteSandbox(target: SqliteTarget): SqliteSandbox {
  const opened = lazily(async () => {
    const { createSqliteFs, createSqliteUpperStore } = await backend();
    return { lower: createSqliteFs({ path: target.file, workspace: target.workspace }), store: createSqliteUpperStore({ path: target.file, sandbox: target.sandbox }) };
  });
  return {
    where: `sandbox "${target.sandbox}" of workspace "${target.workspace}" in ${target.file}`,
    feedback: sqliteFeedback(target),
    exists: async () => (await opened()).store.exists(),
    open: async () => {
      const { lower, store } = await opened();
      return (await overlayBackend()).createOverlayFs({ lower, store });
    },
    exclusive: async (fn, options = {}) => (await opened()).store.withLock(fn, lockOptions(options)),
  };
}

/** The review feedback of the target's sandbox, in its file (heard by the agent that `serve --sqlite` serves). */
export function sqliteFeedback(target: SqliteTarget): FeedbackStore {
  return lazyFeedback(async () => (await backend()).createSqliteFeedback({ path: target.file, sandbox: target.sandbox }));
}

/** What `serve --sqlite` (and mount, run) works on: the workspace, or a sandbox over it kept in the file. */
export async function openSqliteWorkspace(target: SqliteTarget, mode: Mode, quota: FsQuota = {}): Promise<Workspace> {
  const [{ createSqliteFs, createSqliteUpperStore }, { createOverlayFs }] = await Promise.all([backend(), overlayBackend()]);
  const lower = createSqliteFs({ path: target.file, workspace: target.workspace, ...(mode === 'direct' ? quota : {}) });
  if (mode === 'direct') return { mode, root: '/', stateDir: undefined, use: (fn) => fn(lower) };
  const store = createSqliteUpperStore({ path: target.file, sandbox: target.sandbox });
  const serial = new KeyedMutex();
  let overlay: OverlayFileSystem | undefined;
  let seen: string | undefined;
  const use = <T>(fn: (fs: FileSystem) => Promise<T>, options: StateLockOptions = {}) =>
    serial.run('', () =>
      store.withLock(async () => {
        // Another process (a commit or discard) may have changed the sandbox since.
        const now = await store.revision();
        if (overlay === undefined || now !== seen) overlay = await createOverlayFs({ lower, store, ...quota });
        try {
          return await fn(overlay);
        } finally {
          seen = await store.revision().catch(() => undefined);
        }
      }, lockOptions(options)),
    );
  await use(async () => undefined);
  return { mode, root: '/', stateDir: undefined, use };
}
