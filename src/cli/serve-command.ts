// `dsh-fs serve`: loaded only by that command (it pulls the tools, the MCP SDK and the review).
import { EXIT_FAILURE, EXIT_OK, UsageError, oneOf, optionalString, parseToolList, requireString, type Parsed } from './args.js';
import type { Io } from './io.js';
import { dirFeedback, reviewNotes } from '../review/index.js';
import { reviewTools } from '../mcp/review-tools.js';
import { serveAuditLog } from './audit.js';
import { auditPlugin } from '../harness/audit.js';
import type { TransportEnd } from './stdio-transport.js';
import { importPeer } from '../peers.js';
import { fsTools, moveDeleteTools, patchTools, searchTools, textEditorTool } from '../tools/index.js';
import { openWorkspace, resolveRoot, resolveStateDir, type Mode } from './workspace.js';
import { openPostgresWorkspace, postgresFeedback, postgresTarget } from './postgres.js';
import { openSqliteWorkspace, sqliteFeedback, sqliteTarget } from './sqlite.js';
import { describeQuota, quotaOptions } from './quota.js';
import { packageVersion } from './version.js';

/** Shown when `serve` is started by hand: it is not hung, it waits for a client. */
export const SERVE_TTY_HINT = 'waiting for an MCP client on stdin (an MCP client starts this command itself; see "dsh-fs serve --help"); Ctrl-C stops it';


export async function serve(parsed: Parsed, io: Io): Promise<number> {
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

