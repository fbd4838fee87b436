/**
 * The audit log as the CLI sees it: which log `serve` records to (next to the data it serves) and
 * the `log` command that reads it.
 */
import { join, posix, resolve } from 'node:path';
import { AUDIT_FILE, createJsonlAuditLog } from '../harness/audit-jsonl.js';
import type { AuditLog, AuditPath, AuditQuery, AuditRecord } from '../harness/audit-log.js';
import { EXIT_OK, UsageError, optionalString, requireString, type Parsed } from './args.js';
import type { Io } from './io.js';
import { poolFor, postgresTarget, type PostgresTarget } from './postgres.js';
import { display, rootRelative } from './sandbox.js';
import { sqliteTarget, type SqliteTarget } from './sqlite.js';
import { resolveRoot, resolveStateDir } from './workspace.js';

// A log in a database: its backend loaded only when the command reaches it.
const postgresLog = () => import('../backends/postgres/audit.js');
const sqliteLog = () => import('../backends/sqlite/audit.js');

/** Where `serve` records: the sandbox's state directory, the database, or `--audit-file`; undefined for none. */
export async function serveAuditLog(
  where: { pg?: PostgresTarget; file?: SqliteTarget; root: string; stateDir?: string; mode: 'sandbox' | 'direct' },
  parsed: Parsed,
  io: Io,
): Promise<AuditLog | undefined> {
  if (parsed.values['no-audit'] === true) {
    if (parsed.values['audit-file'] !== undefined) throw new UsageError('--audit-file and --no-audit do not go together', 'serve');
    return undefined;
  }
  const sandbox = (name: string) => (where.mode === 'sandbox' ? { sandbox: name } : {});
  if (where.pg !== undefined) return (await postgresLog()).createPostgresAuditLog({ client: poolFor(where.pg.url), workspace: where.pg.workspace, ...sandbox(where.pg.sandbox) });
  if (where.file !== undefined) return (await sqliteLog()).createSqliteAuditLog({ path: where.file.file, workspace: where.file.workspace, ...sandbox(where.file.sandbox) });
  const named = optionalString(parsed, 'audit-file');
  if (named !== undefined) return createJsonlAuditLog({ file: resolve(io.cwd, named) });
  // A directory served directly has no state beside it: its calls are recorded only to a file the user names.
  return where.stateDir === undefined ? undefined : createJsonlAuditLog({ file: join(where.stateDir, AUDIT_FILE) });
}

/** log: the recorded tool calls, oldest first (one line each, or --json). */
export async function log(parsed: Parsed, io: Io): Promise<number> {
  const { auditLog, root, key } = await locateLog(parsed, io);
  const limit = optionalString(parsed, 'limit');
  if (limit !== undefined && !/^\d+$/.test(limit)) throw new UsageError(`--limit must be a non-negative integer, not "${limit}"`, 'log');
  const query: AuditQuery = {
    ...pick(parsed, 'owner', 'tool', 'since', 'until'),
    ...(optionalString(parsed, 'path') === undefined ? {} : { path: key(optionalString(parsed, 'path')!) }),
    ...(limit === undefined ? {} : { limit: Number(limit) }),
  };
  for (const name of ['since', 'until'] as const) {
    const v = query[name] as string | undefined;
    if (v !== undefined && Number.isNaN(Date.parse(v))) throw new UsageError(`--${name} must be a date or time (ISO 8601), not "${v}"`, 'log');
  }
  let records: AuditRecord[];
  try {
    records = (await auditLog.query(query)).map((r) => ({ ...r, paths: r.paths.map((p) => ({ ...p, path: display(root, p.path) })) }));
  } finally {
    await auditLog.close?.();
  }
  if (parsed.values.json === true) {
    io.stdout.write(`${JSON.stringify({ records }, null, 2)}\n`);
    return EXIT_OK;
  }
  if (records.length === 0) io.stdout.write('No tool calls recorded.\n');
  const widths = columnWidths(records);
  for (const r of records) io.stdout.write(`${logLine(r, widths)}\n`);
  return EXIT_OK;
}

type Widths = readonly [owner: number, tool: number, outcome: number];

function columnWidths(records: readonly AuditRecord[]): Widths {
  const widest = (f: (r: AuditRecord) => string) => Math.max(0, ...records.map((r) => f(r).length));
  return [widest((r) => r.owner ?? '-'), widest((r) => r.tool), widest((r) => r.outcome)];
}

/** One record as a line: time, owner, tool, outcome (padded to `widths`), then each path with its versions before→after. */
export function logLine(r: AuditRecord, widths: Widths = [0, 0, 0]): string {
  const paths = r.paths.map((p) => `${p.path} ${shortVersion(p.before)}→${shortVersion(p.after)}`).join(', ');
  const cells = [(r.owner ?? '-').padEnd(widths[0]), r.tool.padEnd(widths[1]), r.outcome.padEnd(widths[2])];
  return [r.time, ...cells, paths].join('  ').trimEnd();
}

/** A version as the line shows it: 10 characters after its scheme (`sha256:`); `-` for absent, `?` for unknown. */
function shortVersion(v: AuditPath['before']): string {
  if (v === undefined) return '?';
  if (v === null) return '-';
  return v.slice(v.indexOf(':') + 1).slice(0, 10);
}

function pick(parsed: Parsed, ...names: ('owner' | 'tool' | 'since' | 'until')[]): Partial<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = optionalString(parsed, name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

interface LocatedLog {
  readonly auditLog: AuditLog;
  /** What paths are shown relative to. */
  readonly root: string;
  /** `--path` as the key records carry. */
  key(path: string): string;
}

async function locateLog(parsed: Parsed, io: Io): Promise<LocatedLog> {
  const pg = postgresTarget(parsed, 'log');
  const file = pg === undefined ? sqliteTarget(parsed, 'log') : undefined;
  const inDb = pg !== undefined || file !== undefined;
  if (inDb && parsed.values['audit-file'] !== undefined) throw new UsageError('--audit-file goes with --root', 'log');
  // Without --sandbox, every record of the workspace: its sandboxes' and direct serving's.
  const scope = (name: string) => (parsed.values.sandbox === undefined ? { allSandboxes: true } : { sandbox: name });
  const key = (path: string) => posix.resolve('/', path);
  if (pg !== undefined) return { auditLog: (await postgresLog()).createPostgresAuditLog({ client: poolFor(pg.url), workspace: pg.workspace, ...scope(pg.sandbox) }), root: '/', key };
  if (file !== undefined) return { auditLog: (await sqliteLog()).createSqliteAuditLog({ path: file.file, workspace: file.workspace, ...scope(file.sandbox) }), root: '/', key };
  const given = requireString(parsed, 'root', 'log');
  const root = await resolveRoot(given);
  const named = optionalString(parsed, 'audit-file');
  if (named !== undefined && parsed.values.state !== undefined) throw new UsageError('--audit-file and --state do not go together', 'log');
  const path = named !== undefined ? resolve(io.cwd, named) : join(await resolveStateDir(root, optionalString(parsed, 'state'), io.env), AUDIT_FILE);
  return {
    auditLog: createJsonlAuditLog({ file: path }),
    root,
    key: (p) => {
      const rel = rootRelative(p, given, root, io.cwd, 'log');
      return rel === '.' ? root : join(root, rel);
    },
  };
}
