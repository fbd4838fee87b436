import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { absorb, forkLayer, startLayer, type LayerStart } from '../backends/overlay/absorb.js';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { FsError, toFsError } from '../seam/index.js';
import { relativeInside } from '../seam/path.js';
import { keepConflicts, keepUpper } from './keep.js';
import { buildLayer } from './layer.js';
import { adoptUpper } from './layer-adopt.js';
import { startNamespace } from './namespace.js';
import { readBack, type ReadBack } from './readback.js';
import { openScratch, type Scratch } from './scratch.js';
import type { RunOptions, RunResult, RunSandboxAccess } from './types.js';

/**
 * Runs `argv` on kernel overlayfs over a sandbox of a local folder (docs/run.md): the program sees
 * the sandbox at the project's own path and runs at disk speed; when it ends, what it changed is
 * imported into the sandbox as one change set (one checkpoint), guarded by the sandbox as the run
 * started: paths the sandbox changed meanwhile are conflicts, kept on the sandbox's side. The
 * project folder is never written. FS_UNSUPPORTED before the program starts when overlayfs or
 * namespaces cannot serve here (the caller may then use a FUSE mount).
 */
export async function runInSandbox(sandbox: OverlayFileSystem | RunSandboxAccess, argv: readonly string[], options: RunOptions): Promise<RunResult> {
  if (!Array.isArray(argv) || argv.length === 0 || argv.some((a) => typeof a !== 'string')) {
    throw new FsError('FS_INVALID_ARGUMENT', 'argv must be a non-empty array of strings');
  }
  if (typeof options?.scratchDir !== 'string' || options.scratchDir === '') throw new FsError('FS_INVALID_ARGUMENT', 'scratchDir must be a path');
  const access: RunSandboxAccess = 'use' in sandbox && typeof sandbox.use === 'function' ? sandbox : { use: (fn) => fn(sandbox as OverlayFileSystem) };
  const t0 = Date.now();
  const { start, root } = await access.use(async (s) => ({ start: await startLayer(s), root: localRoot(s) }));
  const cwd = programDir(root, options.cwd);
  if (relativeInside(root, options.scratchDir) !== undefined) {
    throw new FsError('FS_INVALID_ARGUMENT', `scratchDir "${options.scratchDir}" lies inside the project folder; keep it outside`);
  }
  const scratch = await openScratch(options.scratchDir);
  try {
    await buildLayer(scratch.layer, start.layer, root).catch((err: unknown) => {
      throw toFsError(err, 'cannot lay out the sandbox for overlayfs');
    });
    const t1 = Date.now();
    const ran = await runProgram(scratch, root, cwd, argv, options, start);
    // The read-back counts as import: it starts when the program ends.
    const t2 = ran.exitedAt;
    const output = ran.stdout === undefined ? {} : { stdout: ran.stdout, stderr: ran.stderr };
    if (ran.found === undefined) {
      const kept = await keepUpper(scratch);
      const refused = { code: 'FS_QUOTA_EXCEEDED' as const, message: ran.refused!.message, ...(kept === undefined ? {} : { kept }) };
      return { exitCode: ran.exitCode, added: [], changed: [], deleted: [], conflicts: [], skipped: [], refused, ...output, timings: { layer: t1 - t0, program: t2 - t1, import: Date.now() - t2 } };
    }
    const { found } = ran;
    const source = options.label?.source ?? `run: ${argv.join(' ')}`;
    const label = { ...(options.label?.owner === undefined ? {} : { owner: options.label.owner }), source };
    const absorbed = await access
      .use(async (s) => {
        const result = await absorb(s, start, label);
        return { ...result, checkpoint: result.applied.length > 0 ? s.checkpoints().at(-1)?.id : undefined };
      })
      .catch((err: unknown) => {
        const e = toFsError(err, 'cannot import what the program changed');
        throw e.code === 'FS_UNSUPPORTED' ? new FsError('FS_IO_ERROR', e.message) : e;
      });
    const conflicts = await keepConflicts(scratch, root, absorbed.conflicts);
    const imported = (list: readonly string[]) => list.filter((p) => !covered(p, absorbed.conflicts));
    const added = imported(found.added);
    const changed = imported(found.changed);
    // The kept layer takes the imported files as they are (renamed out of the upper), so the next run need not write them.
    // A failure there costs only a rebuild: the manifest stays marked dirty.
    if (scratch.shared) await adoptUpper(scratch.layer, scratch.upper, root, [...added, ...changed], forkLayer(start), absorbed.layer).catch(() => 0);
    return {
      exitCode: ran.exitCode,
      added,
      changed,
      deleted: imported(found.deleted),
      conflicts,
      skipped: found.skipped,
      ...(absorbed.checkpoint === undefined ? {} : { checkpoint: absorbed.checkpoint }),
      ...output,
      timings: { layer: t1 - t0, program: t2 - t1, import: Date.now() - t2 },
    };
  } finally {
    await scratch.release();
  }
}

function localRoot(s: OverlayFileSystem): string {
  const lower = s.lower as { root?: unknown; sweepTemps?: unknown };
  if (typeof lower.root !== 'string' || typeof lower.sweepTemps !== 'function') {
    throw new FsError('FS_UNSUPPORTED', 'a run on overlayfs needs a sandbox over a local folder (createOverlayFs over createLocalFs)');
  }
  return lower.root;
}

function programDir(root: string, cwd: string | undefined): string {
  if (cwd === undefined) return '';
  const rel = relativeInside(root, cwd);
  if (rel === undefined) throw new FsError('FS_OUTSIDE_ROOT', `the run's working directory "${cwd}" lies outside the project folder "${root}"`);
  return rel;
}

function covered(path: string, tops: readonly string[]): boolean {
  return tops.some((t) => path === t || path.startsWith(`${t}/`));
}

interface Ran {
  readonly exitCode: number;
  /** Undefined when the sandbox's quota refused the run's changes (`refused`). */
  readonly found: ReadBack | undefined;
  readonly refused?: FsError;
  /** When the program ended (Date.now()). */
  readonly exitedAt: number;
  readonly stdout?: Buffer;
  readonly stderr?: Buffer;
}

/** Mounts, runs, and reads the upper back into the start's fork while the namespace still stands. */
async function runProgram(scratch: Scratch, root: string, cwd: string, argv: readonly string[], options: RunOptions, start: LayerStart): Promise<Ran> {
  const env = { ...(options.env ?? process.env) };
  env.GIT_OPTIONAL_LOCKS ??= '0';
  env.PWD = join(root, cwd);
  const stdio = options.stdio ?? 'inherit';
  const ns = await startNamespace({
    merged: root,
    lowers: [scratch.layer.dir, root],
    upper: scratch.upper,
    work: scratch.work,
    cwd,
    argv: options.jail === true ? jailed(root, cwd, env, options.network !== false, argv) : argv,
    env,
    stdio,
  });
  const out = stdio === 'pipe' ? collect(ns.child.stdout!) : undefined;
  const err = stdio === 'pipe' ? collect(ns.child.stderr!) : undefined;
  let exitCode: number;
  let found: ReadBack | undefined;
  let refused: FsError | undefined;
  let exitedAt = 0;
  try {
    exitCode = await ns.exited;
    exitedAt = Date.now();
    found = await readBack(scratch.upper, `${ns.procRoot}${root}`, root, start.fork);
  } catch (err) {
    // FS_UNSUPPORTED means "nothing ran" to callers (who may run the program another way).
    const e = toFsError(err, 'cannot read back what the program changed');
    if (e.code !== 'FS_QUOTA_EXCEEDED') throw e.code === 'FS_UNSUPPORTED' ? new FsError('FS_IO_ERROR', e.message) : e;
    refused = e;
  } finally {
    await ns.close();
  }
  // The output ends with the namespace (its first process holds it to the end).
  return { exitCode: exitCode!, found, exitedAt, ...(refused ? { refused } : {}), ...(out === undefined ? {} : { stdout: await out, stderr: await err! }) };
}

/** The program in bubblewrap: the host read-only but the project, private /tmp and $HOME. */
function jailed(root: string, cwd: string, env: NodeJS.ProcessEnv, network: boolean, argv: readonly string[]): string[] {
  const home = env.HOME !== undefined && env.HOME.startsWith('/') ? ['--tmpfs', env.HOME] : [];
  // The project's bind comes after the tmpfs mounts: it may lie below /tmp or $HOME.
  return ['bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', ...home,
    '--bind', root, root, '--chdir', join(root, cwd), '--die-with-parent', ...(network ? [] : ['--unshare-net']), '--', ...argv];
}

function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  stream.on('data', (b: Buffer) => parts.push(b));
  return new Promise((resolve) => stream.on('close', () => resolve(Buffer.concat(parts))));
}
