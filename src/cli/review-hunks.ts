import { openReview, dirFeedback, type Review, type ReviewDecision, type ReviewFile, type ReviewResult } from '../review/index.js';
import { FsError } from '../seam/index.js';
import { UsageError, type Command, type Parsed, EXIT_FAILURE, EXIT_OK, optionalString } from './args.js';
import { colorsFor } from './color.js';
import type { Io } from './io.js';
import { forkParentDir } from '../backends/overlay/fork-parent.js';
import { exclusive, hasState, locate, openExisting, waiting, type Located } from './sandbox.js';
import { hasSandboxState, openLower, openSandbox } from './workspace.js';
import { reopeningReview, reviewWeb } from './review-web.js';
import { walk } from './review-walk.js';

// The review by hunk on the command line: review (--json, --web, the terminal walk), commit --hunk,
// reject; against the folder, or a fork's against its parent (--against-parent).

/** Where a decision lands: the located sandbox, and with --against-parent the fork's parent too. */
interface Target {
  readonly located: Located;
  readonly parent?: Located;
}

/** With --against-parent: the parent recorded by "dsh-fs fork --into" (only state directories fork). */
async function targetOf(located: Located, parsed: Parsed, command: Command): Promise<Target> {
  if (parsed.values['against-parent'] !== true) return { located };
  if (located.pg) throw new UsageError('--against-parent does not go with --postgres or --sqlite', command);
  const parentDir = (await hasState(located)) ? await forkParentDir(located.stateDir) : undefined;
  if (parentDir === undefined) throw new UsageError(`${located.stateDir} holds no fork: --against-parent reviews a sandbox made by "dsh-fs fork --into"`, command);
  if (!(await hasSandboxState(parentDir))) throw new UsageError(`the fork's parent, ${parentDir}, holds no sandbox any more`, command);
  return { located, parent: { ...located, stateDir: parentDir, label: `the parent sandbox (${parentDir})` } };
}

/** The review of the located sandbox; feedback kept where the sandbox is (state directory or database) so the serving process hears it. */
async function reviewOf({ located, parent }: Target): Promise<Review | undefined> {
  const overlay = await openExisting(located);
  if (!overlay) return undefined;
  const feedback = located.pg ? located.pg.feedback : dirFeedback(located.stateDir);
  if (parent === undefined) return openReview(overlay, { feedback });
  return openReview(overlay, { againstParent: true, parent: await openSandbox(openLower(located.root), parent.stateDir), feedback });
}

/** Runs `fn` holding the lock of each sandbox a decision writes: the parent's first, as merge takes them. */
function lockedFor({ located, parent }: Target, io: Io): <T>(fn: () => Promise<T>) => Promise<T> {
  const onWait = (pid: number | undefined) => waiting(io, pid);
  return (fn) => (parent ? exclusive(parent, () => exclusive(located, fn, { onWait }), { onWait }) : exclusive(located, fn, { onWait }));
}

/** `--hunk ID` (any number of times): the ids given, or undefined without the option. */
export function hunkIds(parsed: Parsed): string[] | undefined {
  const value = (parsed.values as Record<string, unknown>).hunk;
  if (value === undefined) return undefined;
  const ids = (Array.isArray(value) ? value : [value]).map(String);
  return ids;
}

export async function review(parsed: Parsed, io: Io): Promise<number> {
  const target = await targetOf(await locate('review', parsed, io), parsed, 'review');
  const { located } = target;
  if (parsed.values.web === true) {
    const port = portOf(optionalString(parsed, 'port'));
    // Read afresh and decided under the lock at each request, as commit --hunk and reject are: an agent served meanwhile keeps changing the sandbox.
    const locked = lockedFor(target, io);
    const opened = reopeningReview(async () => (await reviewOf(target)) ?? emptyResultReview(), async (fn) => ((await hasState(located)) ? locked(fn) : fn()));
    return reviewWeb(opened, { io, ...(port === undefined ? {} : { port }) });
  }
  if (optionalString(parsed, 'port') !== undefined) throw new UsageError('--port goes with --web', 'review');
  const opened = await reviewOf(target);
  const files = opened ? await opened.files(located.paths) : [];
  if (parsed.values.json === true) {
    io.stdout.write(`${JSON.stringify({ files }, null, 2)}\n`);
    return EXIT_OK;
  }
  if (files.length === 0) {
    io.stdout.write('No changes.\n');
    return EXIT_OK;
  }
  const decisions = await walk(files, io, target.parent ? 'the parent sandbox' : 'the folder');
  if (decisions.length === 0) {
    io.stdout.write('No decisions taken.\n');
    return EXIT_OK;
  }
  return decideLocked(target, parsed, io, (r) => r.decide(decisions));
}

export async function commitHunks(parsed: Parsed, io: Io, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) throw new UsageError('--hunk needs an id (see "dsh-fs review --json")', 'commit');
  if (parsed.positionals.length > 0) throw new UsageError('give either --hunk IDs or PATHs, not both', 'commit');
  if (parsed.values.force === true) throw new UsageError('--force does not go with --hunk', 'commit');
  const target = await targetOf(await locate('commit', parsed, io), parsed, 'commit');
  return decideLocked(target, parsed, io, (r) => r.accept(ids));
}

export async function reject(parsed: Parsed, io: Io): Promise<number> {
  const ids = hunkIds(parsed);
  const reason = optionalString(parsed, 'reason');
  if (ids !== undefined && parsed.positionals.length > 0) throw new UsageError('give either --hunk IDs or PATHs, not both', 'reject');
  if (ids === undefined && parsed.positionals.length === 0) throw new UsageError('give --hunk ID (see "dsh-fs review --json") or the PATHs of whole files to reject', 'reject');
  const target = await targetOf(await locate('reject', parsed, io), parsed, 'reject');
  return decideLocked(target, parsed, io, async (r) => {
    const chosen = ids ?? (await r.files(target.located.paths)).map((f: ReviewFile) => f.id);
    if (chosen.length === 0) return { accepted: [], rejected: [], conflicts: [] };
    return r.reject(chosen, reason);
  });
}

/** Runs a decision under the locks of the sandboxes it writes, on them as saved now, and reports it. */
async function decideLocked(target: Target, parsed: Parsed, io: Io, fn: (review: Review) => Promise<ReviewResult>): Promise<number> {
  const json = parsed.values.json === true;
  const nothing: ReviewResult = { accepted: [], rejected: [], conflicts: [] };
  const result = (await hasState(target.located))
    ? await lockedFor(target, io)(async () => {
        const opened = await reviewOf(target);
        return opened ? fn(opened) : nothing;
      })
    : await fn(emptyResultReview());
  if (json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else report(result, target.parent ?? target.located, io);
  return result.conflicts.length > 0 ? EXIT_FAILURE : EXIT_OK;
}

function report(result: ReviewResult, located: Located, io: Io): void {
  const c = colorsFor(io.stdout, 'auto', io.env);
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  if (result.accepted.length > 0) io.stdout.write(`${c.green(`Committed ${n(result.accepted.length, 'change')}`)} to ${located.label}: ${result.accepted.join(', ')}\n`);
  if (result.rejected.length > 0) io.stdout.write(`${c.yellow(`Rejected ${n(result.rejected.length, 'change')}`)} (reverted in the sandbox): ${result.rejected.join(', ')}\n`);
  for (const p of result.conflicts) io.stdout.write(`${c.red('conflict')} ${p.path}: ${p.message}\n`);
  if (result.accepted.length + result.rejected.length + result.conflicts.length === 0) io.stdout.write('Nothing to decide.\n');
}

function portOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be a port number (0-65535), not "${value}"`, 'review');
  return Number(value);
}

/** No saved sandbox: nothing to review, and any id given is unknown. */
function emptyResultReview(): Review {
  const stale = (ids: readonly string[]) =>
    ids.length === 0 ? Promise.resolve({ accepted: [], rejected: [], conflicts: [] }) : Promise.reject(staleError(ids));
  return {
    files: () => Promise.resolve([]),
    decide: (d: readonly ReviewDecision[]) => stale(d.map((x) => x.id)),
    accept: stale,
    reject: stale,
    pendingFeedback: () => Promise.resolve([]),
    watch: () => () => {},
  };
}

function staleError(ids: readonly string[]): FsError {
  return new FsError('FS_STALE_VERSION', `unknown review id${ids.length === 1 ? '' : 's'}: ${ids.join(', ')} (the sandbox has no changes)`);
}
