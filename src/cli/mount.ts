import { spawn } from 'node:child_process';
import { mkdtemp, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants } from 'node:os';
import { mountFs, type Mount } from '../mount/index.js';
import { FsError, type FileSystem } from '../seam/index.js';
import { EXIT_FAILURE, EXIT_OK, UsageError, oneOf, optionalString, requireString, type Command, type Parsed } from './args.js';
import { Writable } from 'node:stream';
import { leasedFs, type ChangeLabel } from './lease.js';
import type { Io } from './io.js';
import { fork } from './sandbox.js';
import { openWorkspace, resolveRoot, resolveStateDir, type Mode, type Workspace } from './workspace.js';
import { openPostgresWorkspace, postgresTarget } from './postgres.js';
import { openSqliteWorkspace, sqliteTarget } from './sqlite.js';
import { describeQuota, quotaOptions } from './quota.js';
import { mountOptions, onPath } from './mount-options.js';

interface Served {
  readonly workspace: Workspace;
  readonly fs: FileSystem;
  readonly describe: string;
  /** Lets go of the sandbox (its state lock) once the mount is gone. */
  close(): void;
}

/**
 * --root, --mode, --state (or --postgres, --workspace, --sandbox) as `serve` takes them, opened the
 * same way (with the sandbox's lock).
 */
async function openServed(command: Command, parsed: Parsed, io: Io, label: ChangeLabel): Promise<Served> {
  const mode = oneOf<Mode>(optionalString(parsed, 'mode'), ['sandbox', 'direct'], 'mode', command) ?? 'sandbox';
  const quota = quotaOptions(parsed, command);
  const limit = describeQuota(quota);
  const pgTarget = postgresTarget(parsed, command);
  if (pgTarget !== undefined) {
    if (mode === 'direct' && parsed.values.sandbox !== undefined) throw new UsageError('--sandbox applies to --mode sandbox only', command);
    const workspace = await openPostgresWorkspace(pgTarget, mode, quota);
    const where = `PostgreSQL workspace "${pgTarget.workspace}"`;
    return served(workspace, label, mode === 'sandbox' ? `${where} (sandbox "${pgTarget.sandbox}" in the database${limit})` : `${where} (direct: writes go to the workspace${limit})`);
  }
  const fileTarget = sqliteTarget(parsed, command);
  if (fileTarget !== undefined) {
    if (mode === 'direct' && parsed.values.sandbox !== undefined) throw new UsageError('--sandbox applies to --mode sandbox only', command);
    const workspace = await openSqliteWorkspace(fileTarget, mode, quota);
    const where = `workspace "${fileTarget.workspace}" in ${fileTarget.file}`;
    return served(workspace, label, mode === 'sandbox' ? `${where} (sandbox "${fileTarget.sandbox}" in the file${limit})` : `${where} (direct: writes go to the workspace${limit})`);
  }
  const root = await resolveRoot(requireString(parsed, 'root', command));
  const stateOption = optionalString(parsed, 'state');
  if (mode === 'direct' && stateOption !== undefined) throw new UsageError('--state applies to --mode sandbox only', command);
  const stateDir = mode === 'sandbox' ? await resolveStateDir(root, stateOption, io.env) : undefined;
  const workspace = await openWorkspace({ root, mode, ...(stateDir === undefined ? {} : { stateDir }), quota, onRecovered: (line) => io.stderr.write(`dsh-fs: ${line}\n`) });
  return served(workspace, label, stateDir === undefined ? `${root} (direct: writes go to the directory${limit})` : `${root} (sandbox; state in ${stateDir}${limit})`);
}

async function served(workspace: Workspace, label: ChangeLabel, describe: string): Promise<Served> {
  const current = await workspace.use(async (fs) => fs);
  const fs = workspace.mode === 'sandbox' ? leasedFs(workspace, current, label) : current;
  return { workspace, fs, describe, close: () => (fs as Partial<ReturnType<typeof leasedFs>>).close?.() };
}

function signalled(): { readonly stopped: Promise<string>; dispose(): void } {
  let dispose = () => {};
  const stopped = new Promise<string>((resolve) => {
    const on = (name: string) => () => resolve(name);
    const int = on('SIGINT');
    const term = on('SIGTERM');
    process.once('SIGINT', int);
    process.once('SIGTERM', term);
    dispose = () => {
      process.off('SIGINT', int);
      process.off('SIGTERM', term);
    };
  });
  return { stopped, dispose: () => dispose() };
}

/** `dsh-fs mount`: serves in the foreground until SIGINT or SIGTERM, then unmounts. */
export async function mountCommand(parsed: Parsed, io: Io): Promise<number> {
  const mountpoint = parsed.positionals[0];
  if (mountpoint === undefined) throw new UsageError('MOUNTPOINT is required', 'mount');
  if (parsed.positionals.length > 1) throw new UsageError(`unexpected argument "${parsed.positionals[1]}"`, 'mount');
  const served = await openServed('mount', parsed, io, { source: 'mount' });
  const log = (line: string) => io.stderr.write(`dsh-fs: ${line}\n`);
  // Listening before the mount exists: a SIGTERM while it starts still unmounts it.
  const signals = signalled();
  let mount: Mount;
  try {
    mount = await mountFs(served.fs, resolvePath(io.cwd, mountpoint), mountOptions(parsed, 'mount', log));
  } catch (err) {
    signals.dispose();
    served.close();
    throw err;
  }
  log(`mounted ${served.describe} at ${mount.mountpoint}; Ctrl-C or SIGTERM unmounts`);
  const why = await signals.stopped;
  signals.dispose();
  await mount.unmount().finally(() => served.close());
  log(`unmounted ${mount.mountpoint} (${why})`);
  return EXIT_OK;
}

/** `dsh-fs run -- CMD ARGS…` on the FUSE mount: mounts at a temporary directory, runs CMD there, unmounts whatever happens. */
export async function runOnMount(parsed: Parsed, io: Io): Promise<number> {
  const [command, ...args] = parsed.positionals;
  if (command === undefined) throw new UsageError('give the command to run after --, e.g. dsh-fs run --root . -- make test', 'run');
  const jail = parsed.values.jail === true;
  const offline = parsed.values['no-network'] === true;
  if (offline && !jail) throw new UsageError('--no-network applies to --jail only', 'run');
  if (jail && !(await onPath('bwrap', io.env.PATH ?? ''))) {
    throw new FsError('FS_UNSUPPORTED', 'cannot jail the command: missing bwrap: install it with "apt-get install -y bubblewrap" (Debian/Ubuntu, as root)');
  }
  const log = (line: string) => io.stderr.write(`dsh-fs: ${line}\n`);
  const into = optionalString(parsed, 'fork');
  if (into !== undefined) parsed = await forkFirst(parsed, into, io, log);
  const served = await openServed('run', parsed, io, { source: `run: ${[command, ...args].join(' ')}` });
  const where = await mkdtemp(join(tmpdir(), 'dsh-fs-run-'));
  let mount: Mount | undefined;
  try {
    mount = await mountFs(served.fs, where, mountOptions(parsed, 'run', log));
    const argv = jail ? jailed(mount.mountpoint, offline, command, args) : inDirectory(mount.mountpoint, command, args);
    return await runInside(mount.mountpoint, argv, io);
  } finally {
    await mount?.unmount().finally(() => served.close());
    await rmdir(where).catch(() => {});
  }
}

/** --fork NEWSTATE: forks the sandbox as "dsh-fs fork --into" does, then runs in the fork. */
export async function forkFirst(parsed: Parsed, into: string, io: Io, log: (line: string) => void): Promise<Parsed> {
  if (optionalString(parsed, 'mode') === 'direct') throw new UsageError('--fork applies to --mode sandbox only', 'run');
  if (parsed.values.postgres !== undefined) throw new UsageError('--fork does not go with --postgres (a sandbox in the database has no forks)', 'run');
  if (parsed.values.sqlite !== undefined) throw new UsageError('--fork does not go with --sqlite', 'run');
  const values = { root: parsed.values.root, ...(parsed.values.state === undefined ? {} : { state: parsed.values.state }), into };
  const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
  const code = await fork({ values, positionals: [] }, { ...io, stdout: discard });
  if (code !== EXIT_OK) throw new FsError('FS_IO_ERROR', `cannot fork the sandbox into "${into}"`);
  log(`running in a fork of the sandbox, kept in ${into} (compare: dsh-fs diff --root ${String(parsed.values.root)} --state ${into} --against-parent)`);
  return { values: { ...parsed.values, state: into }, positionals: parsed.positionals };
}

/**
 * The command with the mount as its cwd. It is spawned from outside and cds in itself: a child
 * started with its cwd on this process's own mount would wait on this process's event loop while
 * that loop waits for the child to start.
 */
function inDirectory(where: string, command: string, args: readonly string[]): string[] {
  return ['sh', '-c', 'cd "$1" && shift && exec "$@"', 'dsh-fs-run', where, command, ...args];
}

/** The command in bubblewrap: everything read-only but the mount, a private /tmp, optionally no network. */
function jailed(where: string, offline: boolean, command: string, args: readonly string[]): string[] {
  // --tmpfs /tmp before the bind: the mount itself lies under /tmp.
  return ['bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--bind', where, where,
    '--chdir', where, '--die-with-parent', ...(offline ? ['--unshare-net'] : []), '--', command, ...args];
}

function runInside(where: string, argv: readonly string[], io: Io): Promise<number> {
  const [file, ...rest] = argv as [string, ...string[]];
  return new Promise((resolve) => {
    // As on overlayfs: a read-only `git status` must not rewrite the index.
    const child = spawn(file, rest, { cwd: '/', env: { GIT_OPTIONAL_LOCKS: '0', ...io.env, PWD: where }, stdio: 'inherit' });
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    const int = forward('SIGINT');
    const term = forward('SIGTERM');
    process.on('SIGINT', int);
    process.on('SIGTERM', term);
    const done = (code: number) => {
      process.off('SIGINT', int);
      process.off('SIGTERM', term);
      resolve(code);
    };
    child.on('error', (err) => {
      io.stderr.write(`dsh-fs: cannot run ${file}: ${err.message}\n`);
      done(EXIT_FAILURE);
    });
    child.on('close', (code, signal) => done(code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0))));
  });
}

function resolvePath(cwd: string, path: string): string {
  return path.startsWith('/') ? path : join(cwd, path);
}
