// Locating, opening, locking and forking the sandbox the CLI's commands work on.
import { realpathSync } from 'node:fs';
import { isAbsolute, posix, resolve } from 'node:path';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { UsageError, type Command, type Parsed, EXIT_OK, optionalString, requireString } from './args.js';
import { deadHolder, withStateLock, type StateLockOptions } from '../sandbox/lock.js';
import type { Io } from './io.js';
import { relativeInside } from '../seam/path.js';
import { hasSandboxState, mkdirState, openLower, openSandbox, resolveRoot, resolveStateDir } from './workspace.js';
import { postgresSandbox, postgresTarget, type PostgresSandbox } from './postgres.js';
import { sqliteSandbox, sqliteTarget, type SqliteSandbox } from './sqlite.js';

export interface Located {
  readonly root: string;
  readonly stateDir: string;
  /** The PATH arguments, relative to the root ('.' for the root itself); undefined for all. */
  readonly paths: string[] | undefined;
  /** With --postgres or --sqlite: the sandbox in the database (then root is the workspace's '/'). */
  readonly pg?: PostgresSandbox | SqliteSandbox;
  /** What the changes land in, for messages: the root directory, or the workspace. */
  readonly label: string;
}

export async function locate(command: Command, parsed: Parsed, io: Io): Promise<Located> {
  const target = postgresTarget(parsed, command) ?? sqliteTarget(parsed, command);
  if (target !== undefined) {
    // Workspace paths: absolute, or relative to the workspace's root.
    const paths = parsed.positionals.length === 0 ? undefined : parsed.positionals.map((p) => workspaceRelative(p, command));
    const pg = 'url' in target ? postgresSandbox(target) : sqliteSandbox(target);
    return { root: '/', stateDir: pg.where, paths, pg, label: `workspace "${target.workspace}"` };
  }
  const given = requireString(parsed, 'root', command);
  const root = await resolveRoot(given);
  const stateDir = await resolveStateDir(root, optionalString(parsed, 'state'), io.env, { command });
  const paths = parsed.positionals.length === 0 ? undefined : parsed.positionals.map((p) => rootRelative(p, given, root, io.cwd, command));
  return { root, stateDir, paths, label: root };
}

/**
 * A PATH argument as a path relative to the root. Relative paths start from the current
 * directory when it lies inside the root (as in git), else from the root.
 */
export function rootRelative(path: string, givenRoot: string, root: string, cwd: string, command: Command): string {
  const roots = [root, resolve(cwd, givenRoot)];
  // Canonical paths on both sides: relativeInside compares them lexically.
  const inside = (base: string, path: string) => relativeInside(resolve(base), resolve(path));
  const realCwd = safeRealpath(cwd);
  const cwdInside = roots.some((r) => inside(r, cwd) !== undefined || inside(r, realCwd) !== undefined);
  const candidates = isAbsolute(path) ? [path] : cwdInside ? [resolve(cwd, path), resolve(realCwd, path)] : [resolve(root, path)];
  for (const abs of candidates) {
    for (const base of roots) {
      const rel = inside(base, abs);
      if (rel !== undefined) return rel === '' ? '.' : rel;
    }
  }
  throw new UsageError(`"${path}" is outside --root "${givenRoot}"`, command);
}

function workspaceRelative(path: string, command: Command): string {
  const rel = relativeInside('/', posix.resolve('/', path));
  if (rel === undefined) throw new UsageError(`"${path}" is outside the workspace`, command);
  return rel === '' ? '.' : rel;
}

/** Whether the sandbox has saved state (a state directory's document, or the database's row). */
export function hasState(located: Located): Promise<boolean> {
  return located.pg ? located.pg.exists() : hasSandboxState(located.stateDir);
}

/** The sandbox's cross-process lock: the state directory's lock file, or the database's advisory lock. */
export function exclusive<T>(located: Located, fn: (grant: { tookOverFrom: number | undefined }) => Promise<T>, options: StateLockOptions): Promise<T> {
  return located.pg ? located.pg.exclusive(() => fn({ tookOverFrom: undefined }), options) : withStateLock(located.stateDir, fn, options);
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}


export function display(root: string, key: string): string {
  const rel = relativeInside(root, key);
  return rel === undefined || rel === '' ? key : rel;
}

export async function openExisting(located: Located, io?: Io): Promise<OverlayFileSystem | undefined> {
  // Review commands never create a state directory: no state means no changes.
  if (!(await hasState(located))) return undefined;
  const said = io === undefined ? undefined : (line: string) => io.stderr.write(`dsh-fs: ${line}\n`);
  return located.pg ? located.pg.open() : openSandbox(openLower(located.root), located.stateDir, said === undefined ? {} : { onRecovered: said });
}

/**
 * Removes the temp files that a process killed while holding the sandbox's lock (a commit
 * writing to the root) left there, and says so on stderr. Root-relative paths of what it removed.
 */
export async function sweepAfter(dead: number, located: Located, io: Io): Promise<string[]> {
  // Every temp file there now predates this call, and no sandbox process is writing to the root.
  const removed = (await openLower(located.root).sweepTemps({ olderThanMs: 0 })).map((p) => display(located.root, p));
  if (removed.length > 0) {
    const n = removed.length;
    io.stderr.write(
      `dsh-fs: removed ${n} temp file${n === 1 ? '' : 's'} left in ${located.root} by ${dead > 0 ? `process ${dead}` : 'a process'}, ` +
        `which was stopped while it held the sandbox's lock: ${removed.join(', ')}\n`,
    );
  }
  return removed;
}

/** status: when the lock names a dead process, take it over (never waiting long for a live one) and sweep. */
export async function sweepIfDead(located: Located, io: Io): Promise<string[]> {
  // A commit to the database leaves no temp files behind.
  if (located.pg) return [];
  if ((await deadHolder(located.stateDir)) === undefined) return [];
  return withStateLock(located.stateDir, async ({ tookOverFrom }) => (tookOverFrom === undefined ? [] : sweepAfter(tookOverFrom, located, io)), {
    timeoutMs: 2_000,
  }).catch(() => []);
}


/** A checkpoint id given as --NAME: a positive integer. */
export function checkpointArg(value: string, name: string, command: Command): number {
  if (!/^[1-9]\d{0,14}$/.test(value)) throw new UsageError(`--${name} must be a checkpoint id (a positive integer, see "dsh-fs checkpoints"), not "${value}"`, command);
  return Number(value);
}

/**
 * fork: holds the sandbox's lock (no tool call or commit changes it meanwhile) and the new
 * directory's (no server starts on it half-made), then forks the saved state into it.
 */
export async function fork(parsed: Parsed, io: Io): Promise<number> {
  const located = await locate('fork', parsed, io);
  const root = located.root;
  const into = await resolveStateDir(root, requireString(parsed, 'into', 'fork'), io.env, { flag: '--into', command: 'fork' });
  if (into === located.stateDir) throw new UsageError('--into must be a new state directory, not the sandbox\'s own', 'fork');
  if (await hasSandboxState(into)) throw new UsageError(`--into "${into}" already holds a sandbox; a fork needs a new state directory`, 'fork');
  await mkdirState(located.stateDir);
  await mkdirState(into);
  return withStateLock(
    located.stateDir,
    () =>
      withStateLock(
        into,
        async () => {
          const parent = await openSandbox(openLower(root), located.stateDir);
          const child = await parent.fork({ stateDir: into });
          const n = (await child.changes()).length;
          if (parsed.values.json === true) {
            io.stdout.write(`${JSON.stringify({ stateDir: into, parent: located.stateDir, changes: n }, null, 2)}\n`);
          } else {
            io.stdout.write(
              `Forked the sandbox in ${located.stateDir} (${n} change${n === 1 ? '' : 's'}) into ${into}.\n` +
                `Serve it with: dsh-fs serve --root ${root} --state ${into}\n` +
                `Compare it with its parent: dsh-fs diff --root ${root} --state ${into} --against-parent\n`,
            );
          }
          return EXIT_OK;
        },
        { onWait: (pid) => waiting(io, pid) },
      ),
    { onWait: (pid) => waiting(io, pid) },
  );
}

export function waiting(io: Io, pid: number | undefined): void {
  io.stderr.write(`dsh-fs: waiting for ${pid === undefined ? 'another process' : `process ${pid}`}, which is using the sandbox…\n`);
}
