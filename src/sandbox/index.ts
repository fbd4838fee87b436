// One call for a library user: a sandbox over a directory set up as `dsh-fs serve` sets it up.
import { mkdir, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createLocalFs } from '../backends/local/index.js';
import { createOverlayFs, type OverlayFileSystem, type OverlayFsOptions } from '../backends/overlay/index.js';
import {
  AUDIT_FILE,
  auditPlugin,
  createHarness,
  createJsonlAuditLog,
  ownerId,
  type AuditErrorHandler,
  type AuditLog,
  type HarnessContext,
  type HarnessPlugin,
  type HarnessPluginObject,
} from '../harness/index.js';
import { createObservationPolicy } from '../policy/index.js';
import { FsError, toFsError } from '../seam/index.js';
import { relativeInside } from '../seam/path.js';
import { fsTools, moveDeleteTools, patchTools, searchTools, textEditorTool } from '../tools/index.js';
import { lockedFs } from './locked-fs.js';
import { lockedOverlay, type LockedOverlay } from './locked.js';
import { defaultStateDir, realpathOfNearest } from './state.js';

/** Tools served beside the default set, as `dsh-fs serve --tools` names them. */
export type SandboxExtraTool = 'patch' | 'text-editor';

/**
 * Options of `createSandbox`. Options of the overlay (checkpoint retention, and any the overlay
 * gains) pass through to `createOverlayFs`.
 */
export interface CreateSandboxOptions extends Omit<OverlayFsOptions, 'lower' | 'upper' | 'stateDir' | 'store' | 'cwd'> {
  /** The directory the sandbox protects: it changes only on `commit`. */
  readonly root: string;
  /**
   * Where the sandbox keeps its changes (created if missing; outside `root`). Default: where
   * `dsh-fs serve` keeps them, `$XDG_STATE_HOME/dsh-fs/<hash of the real root>`, so the CLI's
   * `status`, `diff`, `commit` and `log` find them with `--root` alone.
   */
  readonly state?: string;
  /** Tools beside read, write, edit, list, glob, grep, move and delete: `apply_patch`, the text editor. */
  readonly tools?: readonly SandboxExtraTool[];
  /** Your own tool plugins, served and audited like the others. */
  readonly plugins?: readonly HarnessPlugin[];
  /** Records every tool call (default: `audit.jsonl` in the state directory, as serve does); false for none. */
  readonly audit?: AuditLog | false;
  /** Where a call the audit log could not record is reported (default: `console.warn`). */
  readonly onAuditError?: AuditErrorHandler;
  /** The observation policy (default: a new one); pass your own to share or restore its state. */
  readonly policy?: HarnessPlugin;
  /** For the default state directory (`XDG_STATE_HOME`); default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * How long an operation waits for the state's lock while another process (a CLI `commit`, a
   * server) holds it, before failing with FS_IO_ERROR naming the holder (default 120 s, as the CLI).
   */
  readonly lockTimeoutMs?: number;
}

/**
 * A sandbox and what drives it. `ctx` runs the tools (`ctx.tools.execute`), under the policy,
 * each call audited and its change's checkpoint labelled `tool:<name>` with the call's owner.
 * `policy` and `tools` are the plugins to serve the same sandbox elsewhere:
 * `createMcpServer({ fs, policy, tools })`. The review handles act on the sandbox's changes.
 */
export interface Sandbox {
  /** The real path of the directory protected. */
  readonly root: string;
  readonly stateDir: string;
  readonly fs: OverlayFileSystem;
  readonly ctx: HarnessContext;
  readonly policy: HarnessPlugin;
  /** The tool plugins, the audit log's first (MCP labels checkpoints itself). */
  readonly tools: readonly HarnessPlugin[];
  /** The audit log the tools record to; undefined with `audit: false`. */
  readonly auditLog: AuditLog | undefined;
  changes: OverlayFileSystem['changes'];
  diff: OverlayFileSystem['diff'];
  commit: OverlayFileSystem['commit'];
  discard: OverlayFileSystem['discard'];
  checkpoints: OverlayFileSystem['checkpoints'];
  rewind: OverlayFileSystem['rewind'];
  /** Closes the audit log (the sandbox's changes are saved as they are made). */
  close(): Promise<void>;
}

/**
 * A copy-on-write sandbox over `root` with the defaults of `dsh-fs serve`: the observation
 * policy, the tools (move and delete included: a person reviews before anything lands), an audit
 * log in the state directory and checkpoints labelled with the tool. Every operation holds the
 * state's cross-process lock, as the CLI's commands do, and sees what they did (docs/overlay.md).
 */
export async function createSandbox(options: CreateSandboxOptions): Promise<Sandbox> {
  const { root: given, state, tools: extra = [], plugins = [], audit, onAuditError, policy: ownPolicy, env, lockTimeoutMs, ...overlayOptions } = options;
  const root = await realRoot(given);
  const stateDir = await stateOutside(root, state === undefined ? defaultStateDir(root, env) : resolve(state), state ?? 'the default state directory');
  try {
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw toFsError(err, `cannot create the sandbox state directory "${stateDir}"`);
  }
  // Each operation takes the state's lock and sees what other processes did, as `dsh-fs serve` does.
  const lower = createLocalFs({ root });
  const locked = lockedOverlay(stateDir, () => createOverlayFs({ ...overlayOptions, lower, stateDir }), lockTimeoutMs === undefined ? {} : { timeoutMs: lockTimeoutMs });
  const fs = lockedFs(locked, await locked.use(async (overlay) => overlay));
  const auditLog = audit === false ? undefined : (audit ?? createJsonlAuditLog({ file: join(stateDir, AUDIT_FILE) }));
  const policy = ownPolicy ?? createObservationPolicy();
  const tools: HarnessPlugin[] = [
    ...(auditLog === undefined ? [] : [auditPlugin({ log: auditLog, ...(onAuditError === undefined ? {} : { onError: onAuditError }) })]),
    fsTools(),
    searchTools(),
    moveDeleteTools(),
    ...(extra.includes('patch') ? [patchTools()] : []),
    ...(extra.includes('text-editor') ? [textEditorTool()] : []),
    ...plugins,
  ];
  const ctx = createHarness({ fs, plugins: [policy, wholeCallLocked(locked), checkpointLabels(fs), ...tools] });
  return {
    root,
    stateDir,
    fs,
    ctx,
    policy,
    tools,
    auditLog,
    changes: (paths, o) => fs.changes(paths, o),
    diff: (paths, o) => fs.diff(paths, o),
    commit: (paths, o) => fs.commit(paths, o),
    discard: (paths, o) => fs.discard(paths, o),
    checkpoints: () => fs.checkpoints(),
    rewind: (id, o) => fs.rewind(id, o),
    close: async () => {
      await auditLog?.close?.();
    },
  };
}

/** Each tool call holds the lock from start to end, as a call to `dsh-fs serve` does. */
function wholeCallLocked(locked: LockedOverlay): HarnessPluginObject {
  return { name: 'state-lock', apply: (ctx) => ctx.tools.around((_info, next) => locked.use(() => next())) };
}

/** Labels the checkpoint of each tool call's change as MCP does: `tool:<name>`, and the call's owner. */
function checkpointLabels(fs: OverlayFileSystem): HarnessPluginObject {
  return {
    name: 'checkpoint-labels',
    apply(ctx) {
      ctx.tools.around((info, next) => {
        const owner = ownerId(info.owner);
        return fs.label({ ...(owner === undefined ? {} : { owner }), source: `tool:${info.name}` }, next);
      });
    },
  };
}

async function realRoot(given: string): Promise<string> {
  if (typeof given !== 'string' || given === '') throw new FsError('FS_INVALID_ARGUMENT', 'createSandbox needs { root }: the directory to protect');
  let real: string;
  try {
    real = await realpath(resolve(given));
  } catch (err) {
    throw toFsError(err, `the sandbox root "${given}"`);
  }
  if (!(await stat(real)).isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `the sandbox root "${given}" is not a directory`);
  return real;
}

/** The state directory's real path; inside the root the agent could rewrite the sandbox's own bookkeeping. */
async function stateOutside(root: string, dir: string, shown: string): Promise<string> {
  const real = await realpathOfNearest(dir);
  if (relativeInside(root, real) !== undefined) {
    throw new FsError('FS_INVALID_ARGUMENT', `the sandbox state "${shown}" lies inside the root "${root}"; keep it outside the directory it protects`);
  }
  return real;
}
