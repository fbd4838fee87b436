import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Command } from './commands.js';

export { COMMANDS, isCommand, type Command } from './commands.js';

/** A mistake in how the command was called: reported with a pointer to --help, exit status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

type Options = NonNullable<ParseArgsConfig['options']>;

/** A command's options: `--help`, then these string-valued options and flags. */
function options(strings: readonly string[], flags: readonly string[] = []): Options {
  const table: Options = { help: { type: 'boolean', short: 'h' } };
  for (const name of strings) table[name] = { type: 'string' };
  for (const name of flags) table[name] = { type: 'boolean' };
  return table;
}

/** Where a sandbox is: over a directory (with its state), in PostgreSQL, or in a SQLite file. */
const SANDBOX = ['root', 'state', 'postgres', 'sqlite', 'workspace', 'sandbox'];
/** Limits on what a command that writes may add (see src/cli/quota.ts). */
const QUOTA = ['max-bytes', 'max-files'];
const TRANSFER = options(['root', 'postgres', 'workspace'], ['overwrite', 'json']);

const OPTIONS: Record<Command, Options> = {
  serve: options([...SANDBOX, 'mode', 'tools', 'max-request-bytes', 'audit-file', ...QUOTA], ['allow-delete', 'no-audit', 'rewind-tool']),
  status: options(SANDBOX, ['against-parent', 'json']),
  diff: options([...SANDBOX, 'color', 'from', 'to'], ['against-parent', 'json']),
  commit: { ...options(SANDBOX, ['against-parent', 'force', 'json', 'include-ignored']), hunk: { type: 'string', multiple: true } },
  discard: options(SANDBOX, ['json']),
  checkpoints: options(SANDBOX, ['json']),
  rewind: options([...SANDBOX, 'to'], ['json']),
  log: options([...SANDBOX, 'audit-file', 'path', 'owner', 'tool', 'since', 'until', 'limit'], ['json']),
  fork: options(['root', 'state', 'into'], ['json']),
  mount: options([...SANDBOX, 'mode', 'cache', ...QUOTA], ['read-only']),
  run: options([...SANDBOX, 'mode', 'fork', 'cache', ...QUOTA], ['read-only', 'jail', 'no-network', 'json']),
  demo: options(['keep']),
  import: TRANSFER,
  export: TRANSFER,
  review: options([...SANDBOX, 'port'], ['against-parent', 'json', 'web']),
  reject: { ...options([...SANDBOX, 'reason'], ['against-parent', 'json']), hunk: { type: 'string', multiple: true } },
  merge: options([...SANDBOX, 'from'], ['markers', 'dry-run', 'json']),
  sync: options(SANDBOX, ['markers', 'dry-run', 'json']),
};

const TAKES_PATHS: Record<Command, boolean> = {
  serve: false,
  status: true,
  diff: true,
  commit: true,
  discard: true,
  checkpoints: false,
  rewind: true,
  log: false,
  fork: false,
  // The mountpoint; the command to run.
  mount: true,
  run: true,
  demo: false,
  import: false,
  export: false,
  review: true,
  reject: true,
  merge: false,
  sync: false,
};

export interface Parsed {
  readonly values: { readonly [name: string]: string | boolean | undefined };
  readonly positionals: readonly string[];
}

/** Parses one command's arguments; every mistake is a UsageError naming the command. */
export function parseCommand(command: Command, argv: readonly string[]): Parsed {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS[command], allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(parseArgsMessage(err), command);
  }
  const values = parsed.values as Parsed['values'];
  if (values.help === true) return { values, positionals: parsed.positionals };
  if (!TAKES_PATHS[command] && parsed.positionals.length > 0) {
    throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`, command);
  }
  for (const [name, value] of Object.entries(values)) {
    if (value === '') throw new UsageError(`--${name} needs a non-empty value`, command);
  }
  return { values, positionals: parsed.positionals };
}

export function requireString(parsed: Parsed, name: string, command: Command): string {
  const value = parsed.values[name];
  if (typeof value !== 'string') throw new UsageError(`--${name} is required`, command);
  return value;
}

export function optionalString(parsed: Parsed, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], name: string, command: Command): T | undefined {
  if (value === undefined) return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, not "${value}"`, command);
}

/** The extra tool sets \`dsh-fs serve --tools\` accepts. */
export const EXTRA_TOOLS = ['patch', 'text-editor', 'review'] as const;
export type ExtraTool = (typeof EXTRA_TOOLS)[number];

/** \`--tools patch,text-editor\`: each name once, every name known. */
export function parseToolList(value: string | undefined, command: Command): readonly ExtraTool[] {
  if (value === undefined) return [];
  const names = value.split(',').map((name) => name.trim());
  const chosen: ExtraTool[] = [];
  for (const name of names) {
    if (name === '') throw new UsageError(`--tools has an empty name in "${value}"; use a comma-separated list of ${EXTRA_TOOLS.join(', ')}`, command);
    if (!(EXTRA_TOOLS as readonly string[]).includes(name)) {
      throw new UsageError(`--tools: unknown tool set "${name}"; known: ${EXTRA_TOOLS.join(', ')}`, command);
    }
    if (!chosen.includes(name as ExtraTool)) chosen.push(name as ExtraTool);
  }
  return chosen;
}

/** node:util's messages, minus the advice that assumes a script rather than a command. */
function parseArgsMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown }).code;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /'([^']+)'/.exec(message)?.[1];
    return option === undefined ? message.split('. ')[0]! : `unknown option "${option}"`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const option = /Option '([^']+)'/.exec(message)?.[1]?.split(',').pop()?.trim().split(' ')[0];
    if (option !== undefined && /does not take/.test(message)) return `${option} does not take a value`;
    // "argument missing", or "ambiguous" when the next word is another option.
    if (option !== undefined) return `${option} needs a value`;
  }
  return message;
}
