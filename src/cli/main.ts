#!/usr/bin/env node
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isFsError } from '../seam/index.js';
import {
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  HELP,
  MAIN_HELP,
  UsageError,
  isCommand,
  oneOf,
  optionalString,
  parseCommand,
  parseToolList,
  requireString,
  type Parsed,
} from './args.js';
import { demo } from './demo.js';
import { mountCommand } from './mount.js';
import { runCommand } from './run.js';
import type { Io } from './io.js';
import { commit, diff, discard, status } from './review.js';
import { fork } from './sandbox.js';
import { commitHunks, hunkIds, reject, review } from './review-hunks.js';
import { dirFeedback, reviewNotes } from '../review/index.js';
import { reviewTools } from '../mcp/review-tools.js';
import { mergeCommand } from './merge.js';
import { syncCommand } from './sync.js';
import { checkpoints, rewind } from './history.js';
import { log as auditLogCommand, serveAuditLog } from './audit.js';
import { auditPlugin } from '../harness/audit.js';
import type { TransportEnd } from './stdio-transport.js';
import { importPeer } from '../peers.js';
import { fsTools, moveDeleteTools, patchTools, searchTools, textEditorTool } from '../tools/index.js';
import { openWorkspace, resolveRoot, resolveStateDir, type Mode } from './workspace.js';
import { closePools, openPostgresWorkspace, postgresFeedback, postgresTarget, transfer } from './postgres.js';
import { openSqliteWorkspace, sqliteFeedback, sqliteTarget } from './sqlite.js';
import { describeQuota, quotaOptions } from './quota.js';

export function packageVersion(): string {
  // src/cli and dist/cli both sit two levels below package.json.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

/** Runs one invocation; resolves to the exit status. Never rejects. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === undefined) {
      io.stderr.write(MAIN_HELP);
      return EXIT_USAGE;
    }
    if (first === '--help' || first === '-h' || first === 'help') {
      const topic = rest[0];
      io.stdout.write(topic !== undefined && isCommand(topic) ? HELP[topic] : MAIN_HELP);
      return EXIT_OK;
    }
    if (first === '--version' || first === '-v') {
      io.stdout.write(`${packageVersion()}\n`);
      return EXIT_OK;
    }
    if (!isCommand(first)) {
      throw new UsageError(first.startsWith('-') ? `unknown option "${first}"` : `unknown command "${first}"`);
    }
    const parsed = parseCommand(first, rest);
    if (parsed.values.help === true) {
      io.stdout.write(HELP[first]);
      return EXIT_OK;
    }
    switch (first) {
      case 'serve':
        return await serve(parsed, io);
      case 'status':
        return await status(parsed, io);
      case 'diff':
        return await diff(parsed, io);
      case 'commit': {
        const ids = hunkIds(parsed);
        return await (ids === undefined ? commit(parsed, io) : commitHunks(parsed, io, ids));
      }
      case 'discard':
        return await discard(parsed, io);
      case 'checkpoints':
        return await checkpoints(parsed, io);
      case 'rewind':
        return await rewind(parsed, io);
      case 'log':
        return await auditLogCommand(parsed, io);
      case 'fork':
        return await fork(parsed, io);
      case 'merge':
        return await mergeCommand(parsed, io);
      case 'sync':
        return await syncCommand(parsed, io);
      case 'mount':
        return await mountCommand(parsed, io);
      case 'run':
        return await runCommand(parsed, io);
      case 'demo':
        return await demo(io, optionalString(parsed, 'keep'));
      case 'import':
      case 'export':
        return await transfer(first, parsed, io);
      case 'review':
        return await review(parsed, io);
      case 'reject':
        return await reject(parsed, io);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      const where = err.command === undefined ? '' : ` ${err.command}`;
      io.stderr.write(`dsh-fs${where}: ${err.message}\nRun "dsh-fs${where} --help" for usage.\n`);
      return EXIT_USAGE;
    }
    const message = isFsError(err) ? `${err.message} (${err.code})` : err instanceof Error ? err.message : String(err);
    io.stderr.write(`dsh-fs: ${message}\n`);
    return EXIT_FAILURE;
  } finally {
    // Database connections of a --postgres command: ended, so the process can exit.
    await closePools();
  }
}

/** Shown when `serve` is started by hand: it is not hung, it waits for a client. */
export const SERVE_TTY_HINT = 'waiting for an MCP client on stdin (an MCP client starts this command itself; see "dsh-fs serve --help"); Ctrl-C stops it';

/**
 * A reader that goes away (`dsh-fs status | head -1`) ends the output, not the command: EPIPE is
 * swallowed and the command finishes with its usual status. Other stream errors are reported.
 */
export function quietOnClosedPipe(stream: NodeJS.WritableStream, stderr: NodeJS.WritableStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') return;
    stderr.write(`dsh-fs: cannot write output: ${err.message}\n`);
    process.exit(EXIT_FAILURE);
  });
}

async function serve(parsed: Parsed, io: Io): Promise<number> {
  const mode = oneOf<Mode>(optionalString(parsed, 'mode'), ['sandbox', 'direct'], 'mode', 'serve') ?? 'sandbox';
  const pgTarget = postgresTarget(parsed, 'serve');
  const fileTarget = sqliteTarget(parsed, 'serve');
  const inDb = pgTarget !== undefined || fileTarget !== undefined;
  if (inDb && mode === 'direct' && parsed.values.sandbox !== undefined) throw new UsageError('--sandbox applies to --mode sandbox only', 'serve');
  const root = inDb ? '/' : await resolveRoot(requireString(parsed, 'root', 'serve'));
  const stateOption = optionalString(parsed, 'state');
  if (mode === 'direct' && stateOption !== undefined) throw new UsageError('--state applies to --mode sandbox only', 'serve');
  const stateDir = mode === 'sandbox' && !inDb ? await resolveStateDir(root, stateOption, io.env) : undefined;
  // move and delete take content away: served where a person reviews changes before they land
  // (the sandbox), and in direct mode only when asked for.
  const moveDelete = mode === 'sandbox' || parsed.values['allow-delete'] === true;
  const extra = parseToolList(optionalString(parsed, 'tools'), 'serve');
  // A patch can delete and move files, so it follows the same rule as move and delete.
  if (extra.includes('patch') && !moveDelete) throw new UsageError('--tools patch can delete and move files: in --mode direct, add --allow-delete', 'serve');
  if (extra.includes('review') && mode === 'direct') throw new UsageError('--tools review applies to --mode sandbox only', 'serve');
  const rewindTool = parsed.values['rewind-tool'] === true;
  const quota = quotaOptions(parsed, 'serve');
  if (rewindTool && mode === 'direct') throw new UsageError('--rewind-tool applies to --mode sandbox only', 'serve');

  // The MCP SDK is an optional peer: checked before anything is opened, loaded only to serve.
  await importPeer('@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/types.js', 'dsh-fs serve');
  const { createDshFsMcpServer } = await import('./serve.js');
  const { BoundedStdioTransport, maxRequestBytes } = await import('./stdio-transport.js');

  // stdout carries MCP messages only: anything a library prints goes to stderr instead.
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;

  const log = (line: string) => io.stderr.write(`dsh-fs: ${line}\n`);
  const workspace =
    pgTarget !== undefined
      ? await openPostgresWorkspace(pgTarget, mode, quota)
      : fileTarget !== undefined
        ? await openSqliteWorkspace(fileTarget, mode, quota)
        : await openWorkspace({ root, mode, ...(stateDir === undefined ? {} : { stateDir }), quota, onRecovered: log });
  const version = packageVersion();
  const audit = await serveAuditLog({ ...(pgTarget ? { pg: pgTarget } : {}), ...(fileTarget ? { file: fileTarget } : {}), root, ...(stateDir ? { stateDir } : {}), mode }, parsed, io);
  const auditing = audit === undefined ? [] : [auditPlugin({ log: audit, onError: (err, info) => log(`the audit log could not record a ${info.tool} call: ${String(err)}`) })];
  // Where the sandbox is: its state directory, or its database.
  const feedback = mode === 'direct' ? undefined : stateDir !== undefined ? dirFeedback(stateDir) : pgTarget !== undefined ? postgresFeedback(pgTarget) : fileTarget !== undefined ? sqliteFeedback(fileTarget) : undefined;
  const tools = () => [
    ...auditing,
    fsTools(),
    searchTools(),
    ...(moveDelete ? [moveDeleteTools()] : []),
    ...(extra.includes('patch') ? [patchTools()] : []),
    ...(extra.includes('text-editor') ? [textEditorTool()] : []),
    // Reasons a reviewer gave for rejected hunks reach the agent on its next tool result.
    // Not to a supervisor serving the review: the reasons are the agent's to hear.
    ...(feedback === undefined || extra.includes('review') ? [] : [reviewNotes(feedback)]),
    ...(extra.includes('review') ? [reviewTools(feedback === undefined ? {} : { feedback })] : []),
  ];
  const { server, idle } = await createDshFsMcpServer(workspace, { version, log, tools, moveDelete, rewindTool });

  const transport = new BoundedStdioTransport({ maxRequestBytes: maxRequestBytes(parsed), log });
  const stopped = new Promise<TransportEnd>((resolve) => {
    void transport.ended.then(resolve);
    process.once('SIGINT', () => resolve({ reason: 'SIGINT', failed: false }));
    process.once('SIGTERM', () => resolve({ reason: 'SIGTERM', failed: false }));
  });
  await server.connect(transport);
  if (process.stdin.isTTY) log(SERVE_TTY_HINT);
  log(
    `${version} serving ${pgTarget === undefined ? root : `PostgreSQL workspace "${pgTarget.workspace}"`} (${mode}${
      pgTarget !== undefined
        ? mode === 'sandbox'
          ? `; sandbox "${pgTarget.sandbox}" in the database`
          : ', writes go to the workspace'
        : stateDir === undefined
          ? ', writes go to the directory'
          : `; sandbox state in ${stateDir}`
    }; ` +
      `move and delete ${moveDelete ? 'on' : 'off, --allow-delete serves them'}` +
      `${extra.length > 0 ? `; also ${extra.join(', ')}` : ''}${describeQuota(quota)}; audit log ${audit !== undefined ? 'on' : parsed.values['no-audit'] === true ? 'off' : 'off, --audit-file FILE records it'})`,
  );
  const why = await stopped;
  // Let calls that started finish, so a mutation is never cut between the write and its record.
  await idle();
  await server.close().catch(() => {});
  log(`stopped: ${why.reason}`);
  if (process.stdout.writableNeedDrain) await new Promise((resolve) => process.stdout.once('drain', resolve));
  return why.failed ? EXIT_FAILURE : EXIT_OK;
}

function isMainModule(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) {
  quietOnClosedPipe(process.stdout, process.stderr);
  const io: Io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), stdin: process.stdin };
  const code = await main(process.argv.slice(2), io);
  // Exit naturally, so piped output is flushed; a stream left open (a server's stdin) ends it after a moment.
  process.exitCode = code;
  setTimeout(() => process.exit(code), 500).unref();
}
