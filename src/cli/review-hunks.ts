import { openReview, dirFeedback, type Review, type ReviewDecision, type ReviewFile, type ReviewResult } from '../review/index.js';
import { FsError } from '../seam/index.js';
import { UsageError, type Command, type Parsed, EXIT_FAILURE, EXIT_OK, optionalString } from './args.js';
import { colorsFor } from './color.js';
import type { Io } from './io.js';
import { exclusive, hasState, locate, openExisting, waiting, type Located } from './sandbox.js';
import { reopeningReview, reviewWeb } from './review-web.js';
import { walk } from './review-walk.js';

// The review by hunk on the command line: review (--json, --web, the terminal walk), commit --hunk, reject.

/** The review of the located sandbox; feedback kept where the sandbox is (state directory or database) so the serving process hears it. */
async function reviewOf(located: Located, parsed: Parsed, command: Command): Promise<Review | undefined> {
  if (parsed.values['against-parent'] === true) throw new UsageError('--against-parent is not supported by review by hunk yet', command);
  const overlay = await openExisting(located);
  if (!overlay) return undefined;
  return openReview(overlay, { feedback: located.pg ? located.pg.feedback : dirFeedback(located.stateDir) });
}

/** `--hunk ID` (any number of times): the ids given, or undefined without the option. */
export function hunkIds(parsed: Parsed): string[] | undefined {
  const value = (parsed.values as Record<string, unknown>).hunk;
  if (value === undefined) return undefined;
  const ids = (Array.isArray(value) ? value : [value]).map(String);
  return ids;
}

export async function review(parsed: Parsed, io: Io): Promise<number> {
  const located = await locate('review', parsed, io);
  if (parsed.values.web === true) {
    const port = portOf(optionalString(parsed, 'port'));
    // Read afresh and decided under the lock at each request, as commit --hunk and reject are: an agent served meanwhile keeps changing the sandbox.
    await reviewOf(located, parsed, 'review'); // a usage mistake fails here, not in the page
    const opened = reopeningReview(async () => (await reviewOf(located, parsed, 'review')) ?? emptyResultReview(), async (fn) => ((await hasState(located)) ? exclusive(located, fn, { onWait: (pid) => waiting(io, pid) }) : fn()));
    return reviewWeb(opened, { io, ...(port === undefined ? {} : { port }) });
  }
  if (optionalString(parsed, 'port') !== undefined) throw new UsageError('--port goes with --web', 'review');
  const opened = await reviewOf(located, parsed, 'review');
  const files = opened ? await opened.files(located.paths) : [];
  if (parsed.values.json === true) {
    io.stdout.write(`${JSON.stringify({ files }, null, 2)}\n`);
    return EXIT_OK;
  }
  if (files.length === 0) {
    io.stdout.write('No changes.\n');
    return EXIT_OK;
  }
  const decisions = await walk(files, io);
  if (decisions.length === 0) {
    io.stdout.write('No decisions taken.\n');
    return EXIT_OK;
  }
  return decideLocked(located, parsed, 'review', io, (r) => r.decide(decisions));
}

export async function commitHunks(parsed: Parsed, io: Io, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) throw new UsageError('--hunk needs an id (see "dsh-fs review --json")', 'commit');
  if (parsed.positionals.length > 0) throw new UsageError('give either --hunk IDs or PATHs, not both', 'commit');
  if (parsed.values.force === true) throw new UsageError('--force does not go with --hunk', 'commit');
  const located = await locate('commit', parsed, io);
  return decideLocked(located, parsed, 'commit', io, (r) => r.accept(ids));
}

export async function reject(parsed: Parsed, io: Io): Promise<number> {
  const ids = hunkIds(parsed);
  const reason = optionalString(parsed, 'reason');
  if (ids !== undefined && parsed.positionals.length > 0) throw new UsageError('give either --hunk IDs or PATHs, not both', 'reject');
  if (ids === undefined && parsed.positionals.length === 0) throw new UsageError('give --hunk ID (see "dsh-fs review --json") or the PATHs of whole files to reject', 'reject');
  const located = await locate('reject', parsed, io);
  return decideLocked(located, parsed, 'reject', io, async (r) => {
    const chosen = ids ?? (await r.files(located.paths)).map((f: ReviewFile) => f.id);
    if (chosen.length === 0) return { accepted: [], rejected: [], conflicts: [] };
    return r.reject(chosen, reason);
  });
}

/** Runs a decision under the sandbox's lock, on the sandbox as saved now, and reports it. */
async function decideLocked(located: Located, parsed: Parsed, command: Command, io: Io, fn: (review: Review) => Promise<ReviewResult>): Promise<number> {
  const json = parsed.values.json === true;
  const nothing: ReviewResult = { accepted: [], rejected: [], conflicts: [] };
  const result = (await hasState(located))
    ? await exclusive(
        located,
        async () => {
          const opened = await reviewOf(located, parsed, command);
          return opened ? fn(opened) : nothing;
        },
        { onWait: (pid) => waiting(io, pid) },
      )
    : await fn(emptyResultReview());
  if (json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else report(result, located, io);
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
