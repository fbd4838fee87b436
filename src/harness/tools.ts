import { z } from 'zod';
import { FsError, canonicalPath, toFsError, type FileSystem, type FsErrorCode } from '../seam/index.js';
import type { FsEventGate, Owner } from './events.js';
import { withNotes, type ToolNoteSource } from './notes.js';
import { toolListing, type ToolHints, type ToolListing } from './tool-schema.js';

export { toJsonSchema, toolListing, type JsonSchema, type ToolHints, type ToolListing } from './tool-schema.js';

/** What the caller of a tool passes besides the arguments. */
export interface ToolExec {
  /** Who is calling: an agent session object (identity) or a non-empty string id. */
  readonly owner: Owner;
  /** Cancels the call (best effort; a mutation that already committed stays committed). */
  readonly signal?: AbortSignal;
  /** Directory for relative paths in this call (default: the harness cwd). */
  readonly cwd?: string;
}

/** What a tool's execute receives: the contract, the event gate and the caller. */
export interface ToolCall {
  readonly fs: FileSystem;
  readonly events: FsEventGate;
  readonly owner: Owner;
  readonly cwd: string;
  readonly signal?: AbortSignal;
}

/** A model-facing tool: a zod input schema, an execute that returns a structured value, a render. */
export interface Tool<Args = any, Value = any> {
  readonly name: string;
  /** A short human-readable name (MCP's `title`). */
  readonly title?: string;
  readonly description: string;
  readonly schema: z.ZodType<Args>;
  /**
   * An exact shortcut of `schema` for the plain case: what `schema` would parse `args` to, or
   * undefined to leave the call to `schema` (which then also words any error). Zod costs a few
   * µs per call, as much as a whole small read.
   */
  readonly quickParse?: (args: unknown) => Args | undefined;
  /** The shape of `execute`'s value, when it is a JSON object (MCP's `outputSchema`). */
  readonly outputSchema?: z.ZodType;
  readonly hints?: ToolHints;
  execute(args: Args, call: ToolCall): Promise<Value>;
  /** The text the model sees for a successful call. */
  render(value: Value): string;
}

export interface ToolErrorInfo {
  readonly name: 'FsError';
  readonly code: FsErrorCode;
}

export interface ToolSuccess<Value = unknown> {
  readonly isError: false;
  /** Model-facing text: the tool's render. */
  readonly text: string;
  /** The structured value. */
  readonly value: Value;
  readonly error?: undefined;
}

export interface ToolFailure {
  readonly isError: true;
  /** Model-facing text: `Error: <message>`. */
  readonly text: string;
  readonly error: ToolErrorInfo;
  readonly value?: undefined;
}

/** A call's outcome; `isError` tells which (`if (r.isError) r.error.code; else r.value`). */
export type ToolResult<Value = unknown> = ToolSuccess<Value> | ToolFailure;

/**
 * The value type of each tool by name, for `ctx.tools.execute`'s result. `dsh-fs/tools` adds the
 * built-in tools; a plugin may add its own by declaration merging.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface ToolValues {}

/** The arguments of each tool by name, as a model sends them (before defaults); merged like ToolValues. */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface ToolInputs {}

/** The arguments tool `Name` accepts. */
export type ToolInputOf<Name extends string> = Name extends keyof ToolInputs ? ToolInputs[Name] : unknown;

/** The value type `execute(name, …)` resolves to. */
export type ToolValueOf<Name extends string> = Name extends keyof ToolValues ? ToolValues[Name] : unknown;

/** What a call hook sees of a call, before it runs: the arguments exactly as given. */
export interface ToolCallInfo {
  readonly name: string;
  readonly args: unknown;
  /** `exec.owner` as given (a call with an invalid owner still reaches hooks, and then fails). */
  readonly owner: Owner | undefined;
  /** The directory relative paths of this call resolve against. */
  readonly cwd: string;
  readonly fs: FileSystem;
}

/**
 * Runs around every `execute`: calls `next()` once and returns its result. `next` never rejects.
 * A hook that throws turns the call into an `isError` result, so hooks that must not affect the
 * call (an audit log) catch their own failures.
 */
export type ToolCallHook = (info: ToolCallInfo, next: () => Promise<ToolResult>) => Promise<ToolResult>;

export interface ToolRegistry {
  /** Installs a hook around every call (the first installed is the outermost). Returns a function that removes it. */
  around(hook: ToolCallHook): () => void;
  /** Adds a tool; a second tool with the same name is refused. Returns a function that removes it. */
  register(tool: Tool): () => void;
  has(name: string): boolean;
  get(name: string): Tool | undefined;
  /** Every registered tool, in registration order, with its input as JSON Schema. */
  list(): ToolListing[];
  /**
   * Validates, runs and renders. Never rejects: every failure is an `isError` result. `null` for
   * an optional argument counts as leaving it out (OpenAI's strict mode sends it).
   */
  execute<Name extends string>(name: Name, args: unknown, exec: ToolExec): Promise<ToolResult<ToolValueOf<Name>>>;
  /** Appends what `source` says for the owner to the text of every later result; returns a function that removes it. */
  addNote(source: ToolNoteSource): () => void;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function createToolRegistry(context: { readonly fs: FileSystem; readonly events: FsEventGate; readonly cwd: string }): ToolRegistry {
  const tools = new Map<string, Tool>();
  const hooks: ToolCallHook[] = [];
  const notes = new Set<ToolNoteSource>();

  async function run(name: string, args: unknown, exec: ToolExec): Promise<ToolResult> {
    const tool = tools.get(name);
    if (tool === undefined) {
      const known = [...tools.keys()];
      throw new FsError(
        'FS_INVALID_ARGUMENT',
        `unknown tool ${JSON.stringify(name)}; available tools: ${known.length > 0 ? known.join(', ') : '(none)'}`,
      );
    }
    const call = toCall(exec, context);
    if (call.signal?.aborted) throw new FsError('FS_ABORTED', `${name}: aborted before it started`);
    const value = await tool.execute(tool.quickParse?.(args) ?? parseArgs(tool, name, args), call);
    return { isError: false, text: tool.render(value), value };
  }

  return {
    around(hook) {
      if (typeof hook !== 'function') throw new FsError('FS_INVALID_ARGUMENT', 'a call hook must be a function');
      const entry: ToolCallHook = (info, next) => hook(info, next);
      hooks.push(entry);
      return () => {
        const i = hooks.indexOf(entry);
        if (i !== -1) hooks.splice(i, 1);
      };
    },
    register(tool) {
      if (typeof tool !== 'object' || tool === null || typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) {
        throw new FsError('FS_INVALID_ARGUMENT', 'a tool needs a name of 1–64 letters, digits, "_" or "-"');
      }
      if (typeof tool.execute !== 'function' || typeof tool.render !== 'function' || !(tool.schema instanceof z.ZodType)) {
        throw new FsError('FS_INVALID_ARGUMENT', `tool "${tool.name}" needs a zod schema, an execute and a render`);
      }
      if (tool.quickParse !== undefined && typeof tool.quickParse !== 'function') {
        throw new FsError('FS_INVALID_ARGUMENT', `tool "${tool.name}": quickParse must be a function`);
      }
      if (tools.has(tool.name)) throw new FsError('FS_INVALID_ARGUMENT', `a tool named "${tool.name}" is already registered`);
      tools.set(tool.name, tool);
      return () => {
        if (tools.get(tool.name) === tool) tools.delete(tool.name);
      };
    },
    has: (name) => tools.has(name),
    get: (name) => tools.get(name),
    list: () => [...tools.values()].map(toolListing),
    async execute<Name extends string>(name: Name, args: unknown, exec: ToolExec): Promise<ToolResult<ToolValueOf<Name>>> {
      const call = () => run(name, args, exec).catch((err: unknown) => errorResult(err, `${String(name)} failed`));
      let result: ToolResult;
      if (hooks.length === 0) result = await call();
      else {
        const info = callInfo(name, args, exec, context);
        // The innermost hook wraps the call; a snapshot, so a hook removed meanwhile still completes.
        const chain = [...hooks].reduceRight<() => Promise<ToolResult>>((next, hook) => () => hook(info, next), call);
        try {
          result = await chain();
        } catch (err) {
          result = errorResult(err, `${String(name)} failed`);
        }
      }
      if (notes.size === 0) return result as ToolResult<ToolValueOf<Name>>;
      return { ...result, text: withNotes(result.text, (exec as Partial<ToolExec> | undefined)?.owner, notes) } as ToolResult<ToolValueOf<Name>>;
    },
    addNote(source) {
      if (typeof source !== 'function') throw new FsError('FS_INVALID_ARGUMENT', 'a note source must be a function');
      const entry: ToolNoteSource = (owner) => source(owner);
      notes.add(entry);
      return () => {
        notes.delete(entry);
      };
    },
  };
}

function parseArgs(tool: Tool, name: string, args: unknown): unknown {
  const parsed = tool.schema.safeParse(withoutNullOptionals(args, tool.schema), { reportInput: true });
  if (!parsed.success) {
    throw new FsError('FS_INVALID_ARGUMENT', `invalid arguments for ${name}: ${describeIssues(parsed.error, args, tool.schema)}`);
  }
  return parsed.data;
}

/** `null` for an optional property of an object schema is taken as the property left out. */
function withoutNullOptionals(args: unknown, schema: z.ZodType): unknown {
  if (!(schema instanceof z.ZodObject) || typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const shape = schema.shape as Record<string, z.ZodType>;
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(args)) {
    const field = shape[key];
    if (value !== null || field === undefined || !field.safeParse(undefined).success) continue;
    out ??= { ...(args as Record<string, unknown>) };
    delete out[key];
  }
  return out ?? args;
}

/** The result for a failed call: `Error: <message>` and the error's name and code. */
export function errorResult(err: unknown, what = 'tool call failed'): ToolFailure {
  const error = toFsError(err, what);
  return { isError: true, text: `Error: ${clipMessage(error.message)}`, error: { name: 'FsError', code: error.code } };
}

/** Messages quote the caller's arguments, which can be megabytes long: the model sees at most this many characters. */
const MAX_ERROR_MESSAGE_CHARS = 2000;

function clipMessage(message: string): string {
  return clipMiddle(message, MAX_ERROR_MESSAGE_CHARS);
}

/**
 * Keeps the start and the end of a text longer than `max` characters (where an error's remedy or
 * a path's file name is), never splitting a surrogate pair.
 */
export function clipMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const pairAt = (i: number) => {
    const low = text.charCodeAt(i);
    const high = text.charCodeAt(i - 1);
    return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
  };
  let head = Math.floor(max * 0.7);
  let tail = text.length - Math.floor(max * 0.25);
  if (pairAt(head)) head--;
  if (pairAt(tail)) tail++;
  return `${text.slice(0, head)} … (${tail - head} characters omitted) … ${text.slice(tail)}`;
}

/** A path as success texts quote it: the caller's own spelling, clipped like error messages. */
export function shownPath(path: string): string {
  return clipMiddle(path, MAX_ERROR_MESSAGE_CHARS);
}

function callInfo(name: string, args: unknown, exec: ToolExec, context: { fs: FileSystem; cwd: string }): ToolCallInfo {
  const given = typeof exec === 'object' && exec !== null ? exec : undefined;
  let cwd = context.cwd;
  try {
    if (typeof given?.cwd === 'string') cwd = canonicalPath(given.cwd, context.cwd);
  } catch {
    // The call itself reports the bad cwd.
  }
  return { name, args, owner: given?.owner, cwd, fs: context.fs };
}

function toCall(exec: ToolExec, context: { fs: FileSystem; events: FsEventGate; cwd: string }): ToolCall {
  if (typeof exec !== 'object' || exec === null) {
    throw new FsError('FS_INVALID_ARGUMENT', 'execute needs an exec object naming the owner, e.g. { owner: session }');
  }
  const { owner, signal, cwd } = exec;
  const ownerOk = (typeof owner === 'string' && owner !== '') || (typeof owner === 'object' && owner !== null) || typeof owner === 'function';
  if (!ownerOk) throw new FsError('FS_INVALID_ARGUMENT', 'exec.owner must be an object or a non-empty string identifying the caller');
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new FsError('FS_INVALID_ARGUMENT', 'exec.signal must be an AbortSignal');
  }
  return {
    fs: context.fs,
    events: context.events,
    owner,
    cwd: cwd === undefined ? context.cwd : canonicalPath(cwd, context.cwd),
    ...(signal === undefined ? {} : { signal }),
  };
}

/** One readable sentence per zod issue, naming the argument. */
export function describeIssues(error: z.ZodError, args: unknown, schema: z.ZodType): string {
  const allowed = schema instanceof z.ZodObject ? Object.keys(schema.shape) : undefined;
  return error.issues
    .map((issue) => {
      const name = issue.path.map(String).join('.');
      const arg = `argument "${name}"`;
      switch (issue.code) {
        case 'unrecognized_keys': {
          const keys = issue.keys.map((k) => `"${k}"`).join(', ');
          const list = allowed ? `; allowed arguments: ${allowed.join(', ')}` : '';
          return `unknown argument${issue.keys.length > 1 ? 's' : ''} ${keys}${list}`;
        }
        case 'invalid_type': {
          if (issue.path.length === 0) return `arguments must be a JSON object, got ${typeName(issue.input)}`;
          const input = valueAt(args, issue.path);
          if (input === undefined) return `missing required ${arg}`;
          // null for an optional argument never gets here (it counts as left out).
          return `${arg} must be ${article(issue.expected)}, got ${typeName(input)}`;
        }
        default:
          return name === '' ? issue.message : `${arg}: ${issue.message}`;
      }
    })
    .join('; ');
}

function valueAt(args: unknown, path: readonly PropertyKey[]): unknown {
  let v = args;
  for (const key of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function article(expected: string): string {
  if (expected === 'int') return 'an integer';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isInteger(value)) return `the number ${value}`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
