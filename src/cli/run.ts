import { join } from 'node:path';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { runInSandbox, type RunResult } from '../run/index.js';
import { FsError, isFsError } from '../seam/index.js';
import { relativeInside } from '../seam/path.js';
import { EXIT_FAILURE, UsageError, optionalString, requireString, type Parsed } from './args.js';
import type { Io } from './io.js';
import { forkFirst, mountOptions, onPath, runOnMount } from './mount.js';
import { openWorkspace, resolveRoot, resolveStateDir } from './workspace.js';
import { quotaOptions } from './quota.js';

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
    return runOnMount(parsed, io);
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
  if (json) io.stdout.write(`${JSON.stringify(runJson(result, root))}\n`);
  io.stderr.write(`${summary(result, root)}\n`);
  return result.conflicts.length > 0 && result.exitCode === 0 ? EXIT_FAILURE : result.exitCode;
}

const rel = (root: string, path: string) => relativeInside(root, path) ?? path;

/** `run: 3 changed, 1 deleted, 2 added; 1 conflict: src/a.ts (the program's version: PATH)`. */
export function summary(r: RunResult, root: string): string {
  const counts = [`${r.changed.length} changed`, `${r.deleted.length} deleted`, `${r.added.length} added`].join(', ');
  const parts = [`run: ${counts}`];
  if (r.conflicts.length > 0) {
    const list = r.conflicts.map((c) => `${rel(root, c.path)} (${c.kept === undefined ? 'the program removed it' : `the program's version: ${c.kept}`})`);
    parts.push(`${r.conflicts.length} conflict${r.conflicts.length === 1 ? '' : 's'}: ${list.join(', ')}`);
  }
  if (r.skipped.length > 0) parts.push(`not imported: ${r.skipped.map((s) => `${rel(root, s.path)} (${s.reason})`).join(', ')}`);
  if (r.checkpoint !== undefined) parts.push(`checkpoint ${r.checkpoint}`);
  return parts.join('; ');
}

function runJson(r: RunResult, root: string) {
  const list = (paths: readonly string[]) => paths.map((p) => rel(root, p));
  return {
    exitCode: r.exitCode,
    added: list(r.added),
    changed: list(r.changed),
    deleted: list(r.deleted),
    conflicts: r.conflicts.map((c) => ({ path: rel(root, c.path), ...(c.kept === undefined ? {} : { kept: c.kept }) })),
    skipped: r.skipped.map((s) => ({ path: rel(root, s.path), reason: s.reason })),
    ...(r.checkpoint === undefined ? {} : { checkpoint: r.checkpoint }),
    timings: r.timings,
  };
}
