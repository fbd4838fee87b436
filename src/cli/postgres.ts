/**
 * The CLI over a PostgreSQL workspace (`--postgres URL --workspace NAME`): serving it directly or
 * through a sandbox whose upper layer lives in the same database (named by `--sandbox`, default
 * the workspace's name), so the review commands work from any machine that reaches the database.
 */
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import type { TransferReport } from '../backends/postgres/index.js';
import type { FeedbackStore } from '../review/types.js';
import { KeyedMutex } from '../seam/lock.js';
import type { FileSystem, FsQuota } from '../seam/index.js';
import { EXIT_OK, UsageError, optionalString, requireString, type Command, type Parsed } from './args.js';
import type { StateLockOptions } from '../sandbox/lock.js';
import type { Io } from './io.js';
import type { Mode, Workspace } from './workspace.js';
import { lazily } from '../lazy.js';
import { lazyFeedback } from './lazy.js';
import { poolFor } from './pools.js';

export { closePools, poolFor } from './pools.js';

export interface PostgresTarget {
  readonly url: string;
  readonly workspace: string;
  readonly sandbox: string;
}

/** `--postgres`, `--workspace` and `--sandbox`, or undefined when the command works on `--root`. */
export function postgresTarget(parsed: Parsed, command: Command): PostgresTarget | undefined {
  const url = optionalString(parsed, 'postgres');
  if (url === undefined) {
    // A workspace and sandbox in a SQLite file (see sqliteTarget).
    if (parsed.values.sqlite !== undefined) return undefined;
    for (const name of ['workspace', 'sandbox']) {
      if (parsed.values[name] !== undefined) throw new UsageError(`--${name} goes with --postgres or --sqlite`, command);
    }
    return undefined;
  }
  if (parsed.values.sqlite !== undefined) throw new UsageError('--sqlite and --postgres do not go together', command);
  // A sandbox in the database has no forks (yet): nothing to compare against.
  if (parsed.values['against-parent'] !== undefined) throw new UsageError('--against-parent does not go with --postgres', command);
  for (const name of ['root', 'state']) {
    if (parsed.values[name] !== undefined && command !== 'import' && command !== 'export') {
      throw new UsageError(`--${name} does not go with --postgres (the workspace and its sandbox are in the database)`, command);
    }
  }
  const workspace = requireString(parsed, 'workspace', command);
  return { url, workspace, sandbox: optionalString(parsed, 'sandbox') ?? workspace };
}

const LOCK_TIMEOUT_MS = 120_000;

// The backend and the overlay: imported by the commands that reach the database, not by every command that checks for --postgres.
const backend = () => import('../backends/postgres/index.js');
const overlayBackend = () => import('../backends/overlay/index.js');

/** A sandbox's upper layer in the database, for the review commands. */
export interface PostgresSandbox {
  readonly where: string;
  /** The reasons of rejected hunks waiting for the agent, kept in the database. */
  readonly feedback: FeedbackStore;
  exists(): Promise<boolean>;
  open(): Promise<OverlayFileSystem>;
  /** Holds the sandbox's lock around `fn` (waiting up to two minutes for another holder). */
  exclusive<T>(fn: () => Promise<T>, options?: StateLockOptions): Promise<T>;
}

export function postgresSandbox(target: PostgresTarget): PostgresSandbox {
  const pool = poolFor(target.url);
  const opened = lazily(async () => {
    const { createPostgresFs, createPostgresUpperStore } = await backend();
    return { lower: createPostgresFs({ client: pool, workspace: target.workspace }), store: createPostgresUpperStore({ client: pool, sandbox: target.sandbox }) };
  });
  return {
    where: `sandbox "${target.sandbox}" of workspace "${target.workspace}"`,
    feedback: postgresFeedback(target),
    exists: async () => (await opened()).store.exists(),
    open: async () => {
      const { lower, store } = await opened();
      return (await overlayBackend()).createOverlayFs({ lower, store });
    },
    exclusive: async (fn, options = {}) => (await opened()).store.withLock(fn, lockOptions(options)),
  };
}

function lockOptions(options: StateLockOptions) {
  return {
    timeoutMs: options.timeoutMs ?? LOCK_TIMEOUT_MS,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onWait ? { onWait: () => options.onWait!(undefined) } : {}),
  };
}

/** The review feedback of the target's sandbox, in its database (heard by the agent that `serve --postgres` serves). */
export function postgresFeedback(target: PostgresTarget): FeedbackStore {
  const client = poolFor(target.url);
  return lazyFeedback(async () => (await backend()).createPostgresFeedback({ client, sandbox: target.sandbox }));
}

/** What `serve --postgres` works on: the workspace, or a sandbox over it kept in the database. */
export async function openPostgresWorkspace(target: PostgresTarget, mode: Mode, quota: FsQuota = {}): Promise<Workspace> {
  const [{ createPostgresFs, createPostgresUpperStore }, { createOverlayFs }] = await Promise.all([backend(), overlayBackend()]);
  const pool = poolFor(target.url);
  const lower = createPostgresFs({ client: pool, workspace: target.workspace, ...(mode === 'direct' ? quota : {}) });
  await lower.provider.ready();
  if (mode === 'direct') return { mode, root: lower.root, stateDir: undefined, use: (fn) => fn(lower) };
  const store = createPostgresUpperStore({ client: pool, sandbox: target.sandbox });
  const serial = new KeyedMutex();
  let overlay: OverlayFileSystem | undefined;
  let seen: string | undefined;
  const use = <T>(fn: (fs: FileSystem) => Promise<T>, options: StateLockOptions = {}) =>
    serial.run('', () =>
      store.withLock(async () => {
        // Another process (a commit or discard on any machine) may have changed the sandbox since.
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
  return { mode, root: lower.root, stateDir: undefined, use };
}

/** `dsh-fs import` and `dsh-fs export`. */
export async function transfer(command: 'import' | 'export', parsed: Parsed, io: Io): Promise<number> {
  const target = postgresTarget(parsed, command);
  if (target === undefined) throw new UsageError('--postgres is required', command);
  if (parsed.values.sandbox !== undefined) throw new UsageError('--sandbox does not apply here', command);
  const dir = requireString(parsed, 'root', command);
  const options = { client: poolFor(target.url), workspace: target.workspace, dir, overwrite: parsed.values.overwrite === true };
  const { exportTree, importTree } = await backend();
  const report: TransferReport = command === 'import' ? await importTree(options) : await exportTree(options);
  if (parsed.values.json === true) {
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return EXIT_OK;
  }
  const n = (count: number, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;
  const counts = `${n(report.files, 'file')} (${n(report.bytes, 'byte')}), ${n(report.directories, 'directory').replace('directorys', 'directories')}, ${n(report.symlinks, 'symbolic link')}`;
  io.stdout.write(
    command === 'import'
      ? `Imported ${counts} from ${dir} into workspace "${target.workspace}".\n`
      : `Exported ${counts} from workspace "${target.workspace}" to ${dir}.\n`,
  );
  for (const s of report.skipped) io.stdout.write(`  skipped ${s.path}: ${s.reason}\n`);
  return EXIT_OK;
}
