import { realpathSync } from 'node:fs';
import { isAbsolute, posix, resolve } from 'node:path';
import type { OverlayChange, OverlayChangeKind, OverlayCommitProgress, OverlayFileSystem } from '../backends/overlay/index.js';
import { UsageError, type Command, type Parsed, EXIT_FAILURE, EXIT_OK, oneOf, optionalString, requireString } from './args.js';
import { colorDiff, colorsFor, type ColorMode } from './color.js';
import { deadHolder, withStateLock, type StateLockOptions } from './lock.js';
import type { Io } from './io.js';
import { relativeInside } from '../seam/path.js';
import { hasSandboxState, mkdirState, openLower, openSandbox, resolveRoot, resolveStateDir } from './workspace.js';
import { postgresSandbox, postgresTarget, type PostgresSandbox } from './postgres.js';
import { sqliteSandbox, sqliteTarget, type SqliteSandbox } from './sqlite.js';
import { conflicted } from '../review/merge-markers.js';

interface Located {
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
  const stateDir = await resolveStateDir(root, optionalString(parsed, 'state'), io.env);
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

const LETTER: Record<OverlayChangeKind, string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

export function display(root: string, key: string): string {
  const rel = relativeInside(root, key);
  return rel === undefined || rel === '' ? key : rel;
}

export async function openExisting(located: Located): Promise<OverlayFileSystem | undefined> {
  // Review commands never create a state directory: no state means no changes.
  if (!(await hasState(located))) return undefined;
  return located.pg ? located.pg.open() : openSandbox(openLower(located.root), located.stateDir);
}

/** One change as `--json` shows it, with root-relative paths. */
function changeJson(root: string, c: OverlayChange) {
  return {
    path: display(root, c.path),
    kind: c.kind,
    ...(c.from === undefined ? {} : { from: display(root, c.from) }),
    ...(c.type === undefined ? {} : { type: c.type }),
    ...(c.size === undefined ? {} : { size: c.size }),
    ...(c.linkText === undefined ? {} : { linkText: c.linkText }),
  };
}

/**
 * Removes the temp files that a process killed while holding the sandbox's lock (a commit
 * writing to the root) left there, and says so on stderr. Root-relative paths of what it removed.
 */
async function sweepAfter(dead: number, located: Located, io: Io): Promise<string[]> {
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
async function sweepIfDead(located: Located, io: Io): Promise<string[]> {
  // A commit to the database leaves no temp files behind.
  if (located.pg) return [];
  if ((await deadHolder(located.stateDir)) === undefined) return [];
  return withStateLock(located.stateDir, async ({ tookOverFrom }) => (tookOverFrom === undefined ? [] : sweepAfter(tookOverFrom, located, io)), {
    timeoutMs: 2_000,
  }).catch(() => []);
}

export async function status(parsed: Parsed, io: Io): Promise<number> {
  const located = await locate('status', parsed, io);
  const removedTempFiles = await sweepIfDead(located, io);
  const overlay = await openExisting(located);
  const changes = overlay ? await overlay.changes(located.paths, against(parsed)) : [];
  // Files a merge left with conflict markers (commit refuses them).
  const marked = new Set(overlay ? await conflicted(overlay, located.paths) : []);
  if (parsed.values.json === true) {
    const out = changes.map((c) => ({ ...changeJson(located.root, c), ...(marked.has(c.path) ? { conflicted: true } : {}) }));
    io.stdout.write(`${JSON.stringify({ changes: out, removedTempFiles }, null, 2)}\n`);
    return EXIT_OK;
  }
  if (changes.length === 0) {
    io.stdout.write('No changes.\n');
    return EXIT_OK;
  }
  const c = colorsFor(io.stdout, 'auto', io.env);
  const paint = { added: c.green, modified: c.yellow, deleted: c.red, renamed: c.yellow } as const;
  for (const change of changes) {
    const from = change.from === undefined ? '' : `${display(located.root, change.from)} -> `;
    const dir = change.type === 'directory' ? '/' : '';
    // A link shows what it holds, as `ls -l` does.
    const text = change.linkText === undefined ? '' : ` -> ${change.linkText}`;
    const note = marked.has(change.path) ? ` ${c.red('(conflicted: holds merge markers)')}` : '';
    io.stdout.write(`${paint[change.kind](LETTER[change.kind])} ${from}${display(located.root, change.path)}${dir}${text}${note}\n`);
  }
  return EXIT_OK;
}

export async function diff(parsed: Parsed, io: Io): Promise<number> {
  const mode = oneOf<ColorMode>(optionalString(parsed, 'color'), ['auto', 'always', 'never'], 'color', 'diff') ?? 'auto';
  const located = await locate('diff', parsed, io);
  const overlay = await openExisting(located);
  if (parsed.values.json === true) {
    const changes = overlay ? await overlay.changes(located.paths, against(parsed)) : [];
    const out = [];
    for (const c of changes) out.push({ ...changeJson(located.root, c), diff: await overlay!.diff([c.path], against(parsed)) });
    io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return EXIT_OK;
  }
  const text = overlay ? await overlay.diff(located.paths, against(parsed)) : '';
  io.stdout.write(colorDiff(text, colorsFor(io.stdout, mode, io.env)));
  return EXIT_OK;
}

export async function commit(parsed: Parsed, io: Io): Promise<number> {
  const located = await locate('commit', parsed, io);
  const json = parsed.values.json === true;
  const nothing = () => io.stdout.write(json ? `${JSON.stringify({ committed: [], conflicts: [], failed: [] }, null, 2)}\n` : 'Nothing to commit.\n');
  if (!(await hasState(located))) {
    nothing();
    return EXIT_OK;
  }
  return exclusive(
    located,
    async ({ tookOverFrom }) => {
      // A commit killed mid-write left its temp files in the root: resuming sweeps them.
      if (tookOverFrom !== undefined) await sweepAfter(tookOverFrom, located, io);
      const overlay = (await openExisting(located))!;
      const todo = await overlay.changes(located.paths);
      if (todo.length === 0) {
        nothing();
        return EXIT_OK;
      }
      const kinds = new Map(todo.map((c) => [c.path, c] as const));
      const progress = progressLine(io, located.root);
      let result;
      try {
        result = await overlay.commit(located.paths, { onProgress: progress.update, force: parsed.values.force === true });
      } finally {
        progress.done();
      }
      const status = result.conflicts.length + result.failed.length > 0 ? EXIT_FAILURE : EXIT_OK;
      if (json) {
        const entry = (path: string) => ({ path: display(located.root, path), kind: kinds.get(path)?.kind ?? 'modified' });
        const overwritten = new Set(result.overwritten);
        const report = {
          committed: result.committed.map((path) => ({ ...entry(path), ...(overwritten.has(path) ? { forced: true } : {}) })),
          conflicts: result.conflicts.map((p) => ({ ...entry(p.path), code: p.code, message: p.message })),
          failed: result.failed.map((p) => ({ ...entry(p.path), code: p.code, message: p.message })),
        };
        io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        return status;
      }
      const c = colorsFor(io.stdout, 'auto', io.env);
      const line = (change: OverlayChange | undefined, path: string) =>
        `  ${change ? LETTER[change.kind] : '?'} ${display(located.root, path)}\n`;
      if (result.committed.length > 0) {
        const n = result.committed.length;
        io.stdout.write(`${c.green(`Committed ${n} change${n === 1 ? '' : 's'}`)} to ${located.label}:\n`);
        const overwritten = new Set(result.overwritten);
        for (const path of result.committed) {
          const note = overwritten.has(path) ? `      ${c.yellow('forced')}: replaced a change made in ${located.label} since the sandbox first saw it\n` : '';
          io.stdout.write(line(kinds.get(path), path) + note);
        }
      }
      if (result.conflicts.length > 0) {
        const n = result.conflicts.length;
        io.stdout.write(
          `${c.red(`${n} conflict${n === 1 ? '' : 's'}`)}: changed in ${located.label} since the sandbox first saw ${n === 1 ? 'it' : 'them'}; ` +
            'left untouched there and kept in the sandbox:\n',
        );
        for (const p of result.conflicts) io.stdout.write(`${line(kinds.get(p.path), p.path)}      ${p.message}\n`);
        io.stdout.write('Review with "dsh-fs diff PATH"; then "dsh-fs commit --force PATH" keeps the sandbox\'s version, "dsh-fs discard PATH" the directory\'s.\n');
      }
      if (result.failed.length > 0) {
        const n = result.failed.length;
        io.stdout.write(`${c.red(`${n} failed`)} (kept in the sandbox):\n`);
        for (const p of result.failed) io.stdout.write(`${line(kinds.get(p.path), p.path)}      ${p.code}: ${p.message}\n`);
      }
      return status;
    },
    { onWait: (pid) => waiting(io, pid) },
  );
}

export async function discard(parsed: Parsed, io: Io): Promise<number> {
  const located = await locate('discard', parsed, io);
  const json = parsed.values.json === true;
  const report = (changes: readonly OverlayChange[]) =>
    io.stdout.write(
      json
        ? `${JSON.stringify({ discarded: changes.map((c) => ({ path: display(located.root, c.path), kind: c.kind })) }, null, 2)}\n`
        : changes.length === 0
          ? 'Nothing to discard.\n'
          : `Discarded ${changes.length} change${changes.length === 1 ? '' : 's'}.\n`,
    );
  if (!(await hasState(located))) {
    report([]);
    return EXIT_OK;
  }
  return exclusive(
    located,
    async () => {
      const overlay = (await openExisting(located))!;
      const todo = await overlay.changes(located.paths);
      await overlay.discard(located.paths);
      report(todo);
      return EXIT_OK;
    },
    { onWait: (pid) => waiting(io, pid) },
  );
}

function against(parsed: Parsed) {
  const [from, to] = [optionalString(parsed, 'from'), optionalString(parsed, 'to')];
  if (from === undefined && to === undefined) return { against: parsed.values['against-parent'] === true ? ('parent' as const) : ('lower' as const) };
  if (from === undefined) throw new UsageError('--to needs --from', 'diff');
  if (parsed.values['against-parent'] === true) throw new UsageError('give either --against-parent or --from', 'diff');
  return { from: checkpointArg(from, 'from', 'diff'), ...(to === undefined ? {} : { to: checkpointArg(to, 'to', 'diff') }) };
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
  const into = await resolveStateDir(root, requireString(parsed, 'into', 'fork'), io.env);
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

/** On a terminal one line that updates in place; otherwise one line per file. Always on stderr. */
function progressLine(io: Io, root: string) {
  const tty = io.stderr.isTTY === true;
  let shown = false;
  return {
    update(p: OverlayCommitProgress) {
      const text = `[${p.index}/${p.total}] ${p.outcome} ${display(root, p.path)}`;
      if (tty) {
        io.stderr.write(`\r\x1b[2K${text}`);
        shown = true;
      } else {
        io.stderr.write(`${text}\n`);
      }
    },
    done() {
      if (shown) io.stderr.write('\r\x1b[2K');
    },
  };
}
