import { join } from 'node:path';
import { ignoredGroups, type OverlayChange, type OverlayFileSystem, type OverlayIgnoredGroup } from '../backends/overlay/index.js';
import { runInSandbox, type RunResult } from '../run/index.js';
import { FsError, isFsError } from '../seam/index.js';
import { relativeInside } from '../seam/path.js';
import { EXIT_FAILURE, UsageError, optionalString, requireString, type Parsed } from './args.js';
import type { Io } from './io.js';
import { mountOptions, onPath } from './mount-options.js';
import { openWorkspace, resolveRoot, resolveStateDir } from './workspace.js';
import { quotaOptions } from './quota.js';
import { ignoredJson } from './ignored.js';

/**
 * `dsh-fs run -- CMD ARGS…`: on kernel overlayfs for a sandbox over a directory (docs/run.md),
 * else (a sandbox in PostgreSQL or SQLite, `--mode direct`, `--read-only`, or overlayfs not
 * available here) on the FUSE mount, saying once why.
 */
export async function runCommand(parsed: Parsed, io: Io): Promise<number> {
  const [command, ...args] = parsed.positionals;
  if (command === undefined) throw new UsageError('give the command to run after --, e.g. dsh-fs run --root . -- make test', 'run');
  const jail = parsed.values.jail === true;
  const offline = parsed.values['no-network'] === true;
  if (offline && !jail) throw new UsageError('--no-network applies to --jail only', 'run');
  const json = parsed.values.json === true;
  // Checked whichever engine runs: --cache is the FUSE mount's, and a mistake in it is one anyway.
  mountOptions(parsed, 'run', () => {});
  const fuse = (why: string) => {
    io.stderr.write(`dsh-fs: run: ${why}: running on the FUSE mount\n`);
    // The FUSE engine's modules, loaded only when it serves.
    return import('./mount.js').then((m) => m.runOnMount(parsed, io));
  };
  if (parsed.values.postgres !== undefined) return fuse('a sandbox in PostgreSQL has no folder for overlayfs');
  if (parsed.values.sqlite !== undefined) return fuse('a sandbox in a SQLite file has no folder for overlayfs');
  if (optionalString(parsed, 'mode') === 'direct') return fuse('--mode direct writes the folder itself');
  if (parsed.values['read-only'] === true) return fuse('--read-only is served by the FUSE mount');
  if (jail && !(await onPath('bwrap', io.env.PATH ?? ''))) {
    throw new FsError('FS_UNSUPPORTED', 'cannot jail the command: missing bwrap: install it with "apt-get install -y bubblewrap" (Debian/Ubuntu, as root)');
  }
  const log = (line: string) => io.stderr.write(`dsh-fs: ${line}\n`);
  const into = optionalString(parsed, 'fork');
  if (into !== undefined) {
    const { forkFirst } = await import('./mount.js');
    const { fork: _done, ...values } = (await forkFirst(parsed, into, io, log)).values;
    parsed = { values, positionals: parsed.positionals };
  }
  const root = await resolveRoot(requireString(parsed, 'root', 'run'));
  const stateDir = await resolveStateDir(root, optionalString(parsed, 'state'), io.env);
  const workspace = await openWorkspace({ root, mode: 'sandbox', stateDir, quota: quotaOptions(parsed, 'run'), onRecovered: log });
  const cwd = relativeInside(root, io.cwd) === undefined ? root : io.cwd;
  let result: RunResult;
  try {
    result = await runInSandbox({ use: (fn) => workspace.use((fs) => fn(fs as OverlayFileSystem)) }, [command, ...args], {
      scratchDir: join(stateDir, 'run'),
      cwd,
      env: io.env,
      jail,
      network: !offline,
    });
  } catch (err) {
    // Before the program started: overlayfs or namespaces are not there.
    if (isFsError(err, 'FS_UNSUPPORTED')) return fuse(err.message);
    throw err;
  }
  const ignored = await workspace.use((fs) => ignoredOfRun(fs as OverlayFileSystem, result, root));
  if (json) io.stdout.write(`${JSON.stringify({ ...runJson(result, root, ignored.paths), ignored: ignoredJson(ignored.groups) })}\n`);
  io.stderr.write(`${summary(result, root, ignored)}\n`);
  return (result.conflicts.length > 0 || result.refused !== undefined) && result.exitCode === 0 ? EXIT_FAILURE : result.exitCode;
}

const rel = (root: string, path: string) => relativeInside(root, path) ?? path;

interface RunIgnored {
  /** The run's paths the project's ignore rules (or `.git/`) exclude: counted, not listed. */
  readonly paths: ReadonlySet<string>;
  readonly groups: readonly OverlayIgnoredGroup[];
}

/** Which of the run's paths are ignored outputs or git's own files, by the sandbox's one reading of the rules. */
async function ignoredOfRun(sandbox: OverlayFileSystem, r: RunResult, root: string): Promise<RunIgnored> {
  const touched = [...r.added, ...r.changed, ...r.deleted];
  if (touched.length === 0) return { paths: new Set(), groups: [] };
  const all = await sandbox.changes(touched);
  const names = (c: OverlayChange) => (c.from === undefined ? [c.path] : [c.path, c.from]);
  const marked = all.filter((c) => c.ignored !== undefined);
  const hidden = new Set(marked.flatMap(names));
  // A directory the run made only for ignored files (node_modules/x) is not listed either.
  const shownDirs = withAncestors(all.filter((c) => c.ignored === undefined).flatMap(names));
  const hiddenDirs = withAncestors(hidden);
  const paths = new Set(touched.filter((p) => hidden.has(p) || (!shownDirs.has(p) && hiddenDirs.has(p))));
  return { paths, groups: ignoredGroups(root, marked) };
}

/** The paths and every directory above them. */
function withAncestors(paths: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const path of paths) {
    for (let p = path; p !== '' && !out.has(p); p = p.slice(0, Math.max(0, p.lastIndexOf('/')))) out.add(p);
  }
  return out;
}

/**
 * `run: 3 changed, 1 deleted, 2 added; 412 ignored (node_modules/, .cache/); 1 conflict: src/a.ts
 * (the program's version: PATH)`.
 */
export function summary(r: RunResult, root: string, ignored: RunIgnored = { paths: new Set(), groups: [] }): string {
  const shown = (paths: readonly string[]) => paths.filter((p) => !ignored.paths.has(p)).length;
  const counts = [`${shown(r.changed)} changed`, `${shown(r.deleted)} deleted`, `${shown(r.added)} added`].join(', ');
  const kept = r.refused?.kept === undefined ? '' : `; the program's files are kept in ${r.refused.kept}`;
  const parts = [r.refused === undefined ? `run: ${counts}` : `run: nothing imported (${r.refused.code}): ${r.refused.message}${kept}`];
  const hidden = ignored.groups.reduce((n, g) => n + g.count, 0);
  if (hidden > 0) parts.push(`${hidden} ignored (${ignored.groups.map((g) => g.path).join(', ')})`);
  if (r.conflicts.length > 0) {
    const list = r.conflicts.map((c) => `${rel(root, c.path)} (${c.kept === undefined ? 'the program removed it' : `the program's version: ${c.kept}`})`);
    parts.push(`${r.conflicts.length} conflict${r.conflicts.length === 1 ? '' : 's'}: ${list.join(', ')}`);
  }
  if (r.skipped.length > 0) parts.push(`not imported: ${r.skipped.map((s) => `${rel(root, s.path)} (${s.reason})`).join(', ')}`);
  if (r.checkpoint !== undefined) parts.push(`checkpoint ${r.checkpoint}`);
  return parts.join('; ');
}

function runJson(r: RunResult, root: string, ignored: ReadonlySet<string>) {
  const list = (paths: readonly string[]) => paths.filter((p) => !ignored.has(p)).map((p) => rel(root, p));
  return {
    exitCode: r.exitCode,
    added: list(r.added),
    changed: list(r.changed),
    deleted: list(r.deleted),
    conflicts: r.conflicts.map((c) => ({ path: rel(root, c.path), ...(c.kept === undefined ? {} : { kept: c.kept }) })),
    skipped: r.skipped.map((s) => ({ path: rel(root, s.path), reason: s.reason })),
    ...(r.checkpoint === undefined ? {} : { checkpoint: r.checkpoint }),
    ...(r.refused === undefined ? {} : { refused: r.refused }),
    timings: r.timings,
  };
}
