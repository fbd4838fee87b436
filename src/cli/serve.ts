import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, type CallToolResult, type ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { createHarness, errorResult, type HarnessContext, type HarnessPlugin, type ToolResult } from '../harness/index.js';
import { createObservationPolicy } from '../policy/index.js';
import type { FileSystem } from '../seam/index.js';
import { fsTools, searchTools } from '../tools/index.js';
import type { Workspace } from './workspace.js';

export interface McpServerOptions {
  readonly version: string;
  /** One line of diagnostics (the CLI sends them to stderr; stdout carries only MCP). */
  readonly log?: (line: string) => void;
  /** The tool plugins (default: read/write/edit and the search tools). */
  readonly tools?: () => readonly HarnessPlugin[];
}

export interface DshFsMcpServer {
  readonly server: McpServer;
  /** Resolves when every tool call that has started has finished. */
  idle(): Promise<void>;
}

/** Tools that never change a file: clients may run them without asking. */
const READ_ONLY = new Set(['read', 'glob', 'grep']);

const defaultTools = (): HarnessPlugin[] => [fsTools(), searchTools()];

/**
 * An MCP server exposing every tool of a harness over `workspace`, under one observation policy.
 * The server is one MCP session, so all its calls share one owner.
 */
export async function createDshFsMcpServer(workspace: Workspace, options: McpServerOptions): Promise<DshFsMcpServer> {
  const log = options.log ?? (() => {});
  const plugins = options.tools ?? defaultTools;
  const policy = createObservationPolicy();
  const owner = `mcp-session-${randomUUID()}`;

  // A sandbox reloaded after another process committed is a new FileSystem: a new harness over
  // it, with the same policy, so the session keeps what it has read.
  let current: { fs: FileSystem; ctx: HarnessContext } | undefined;
  const harnessFor = (fs: FileSystem): HarnessContext => {
    if (current?.fs !== fs) {
      const ctx = createHarness({
        fs,
        plugins: [policy, ...plugins()],
        onListenerError: (error, info) => log(`an ${info.event} listener failed for "${info.target.displayPath}": ${String(error)}`),
      });
      current = { fs, ctx };
    }
    return current.ctx;
  };

  const server = new McpServer(
    { name: 'dsh-fs', version: options.version },
    { instructions: instructions(workspace) },
  );

  const inflight = new Set<Promise<unknown>>();
  const runTool = async (name: string, args: unknown, signal: AbortSignal): Promise<CallToolResult> => {
    const run = (async (): Promise<CallToolResult> => {
      let result: ToolResult;
      try {
        result = await workspace.use((fs) => harnessFor(fs).tools.execute(name, args, { owner, signal }), { signal });
      } catch (err) {
        // The workspace itself failed (the state lock, a damaged state directory): still a tool result.
        result = errorResult(err, `${name} failed`);
      }
      log(`${name}: ${result.isError ? (result.error?.code ?? 'error') : 'ok'}`);
      return toCallToolResult(result);
    })();
    inflight.add(run);
    try {
      return await run;
    } finally {
      inflight.delete(run);
    }
  };

  const listing = await workspace.use(async (fs) => harnessFor(fs));
  for (const { name, description } of listing.tools.list()) {
    const tool = listing.tools.get(name)!;
    const annotations: ToolAnnotations = READ_ONLY.has(name)
      ? { readOnlyHint: true }
      : { readOnlyHint: false, destructiveHint: workspace.mode === 'direct' };
    server.registerTool(name, { description, inputSchema: tool.schema, annotations }, (args: unknown, extra) =>
      runTool(name, args, extra.signal),
    );
  }
  // Calls go to the harness's registry, which validates the arguments itself, so an MCP client
  // gets the same messages as an in-process caller ("unknown argument ...; allowed arguments: ...")
  // and every failure carries an FsError code.
  server.server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    runTool(request.params.name, request.params.arguments ?? {}, extra.signal),
  );

  return {
    server,
    async idle() {
      // A turn of the event loop after the last call, so the SDK has sent its response too.
      do {
        await Promise.allSettled([...inflight]);
        await new Promise((resolve) => setImmediate(resolve));
      } while (inflight.size > 0);
    },
  };
}

/** MCP's shape of a registry result: the rendered text, plus the structured value on success. */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const content = [{ type: 'text' as const, text: result.text }];
  if (result.isError) {
    // The code travels in _meta, so clients that show structuredContent still show the model the text and its remedy.
    return { isError: true, content, ...(result.error ? { _meta: { 'dsh-fs/error': { ...result.error } } } : {}) };
  }
  return { content, structuredContent: toStructured(result.value) };
}

function toStructured(value: unknown): Record<string, unknown> {
  // Through JSON, so the client receives exactly what the protocol can carry (no undefined, no class instances).
  const plain: unknown = value === undefined ? {} : JSON.parse(JSON.stringify(value));
  return typeof plain === 'object' && plain !== null && !Array.isArray(plain) ? (plain as Record<string, unknown>) : { value: plain };
}

function instructions(workspace: Workspace): string {
  const base =
    `Files live under ${workspace.root}; tool paths are absolute or relative to it. ` +
    'Read a file (any part) before you overwrite or edit it; if it changed since, read it again.';
  return workspace.mode === 'sandbox'
    ? `${base} Changes are kept in a sandbox that a person reviews and commits; the directory itself changes only then.`
    : base;
}
