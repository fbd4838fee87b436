import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createHarness, errorResult, type HarnessContext, type HarnessPlugin, type Owner, type ToolListing, type ToolResult } from '../harness/index.js';
import { requirePeer } from '../peers.js';
import { createObservationPolicy } from '../policy/index.js';
import type { FileSystem } from '../seam/index.js';
import { fsTools, searchTools } from '../tools/index.js';
import { createRewindTool, hasHistory, registerCheckpoints } from './history.js';
import { keepDroppedArguments } from './raw-args.js';
import { mcpTool, toCallToolResult } from './result.js';

export interface CreateMcpServerOptions {
  /** The filesystem the tools work on. */
  readonly fs: FileSystem;
  /** The observation policy (default: a new `createObservationPolicy()`); pass your own to export or restore its state. */
  readonly policy?: HarnessPlugin;
  /** Tool plugins (default: `fsTools()` and `searchTools()`); your own harness tools are served the same way. */
  readonly tools?: readonly HarnessPlugin[];
  /** Server name and version in the MCP handshake (default `dsh-fs`, `0.0.0`). */
  readonly name?: string;
  readonly version?: string;
  /** The server's instructions to the model (default: names the cwd and the read-before-write rule). */
  readonly instructions?: string;
  /** `destructiveHint` of the tools that change files (default true; false when changes are reviewed first, as in a sandbox). */
  readonly destructive?: boolean;
  /** The session the policy tracks (default: one new session per server; stdio carries one client). */
  readonly owner?: Owner;
  /** One line per tool call (`edit: ok`, `write: FS_STALE_VERSION`). */
  readonly log?: (line: string) => void;
  /**
   * Runs each call (default: on `fs`). A host may take a lock here, or hand over a newer
   * FileSystem; a harness is made per FileSystem, under the same policy.
   */
  readonly run?: <T>(call: (fs: FileSystem) => Promise<T>, signal: AbortSignal) => Promise<T>;
  /**
   * Serve a `rewind` tool (default false: a model that can undo anything undoes what a person
   * wanted kept). Only where `fs` keeps checkpoints (an overlay).
   */
  readonly rewindTool?: boolean;
}

/**
 * An MCP server serving a harness's tools over `fs` under the observation policy: connect it to
 * any transport (`await server.connect(transport)`). Tools carry a title, annotations and an
 * outputSchema that their `structuredContent` follows; an unknown tool is a JSON-RPC error.
 * The server owns `tools/list` and `tools/call`: add tools as harness plugins (`tools`), not
 * with `server.registerTool`. Needs the optional peer `@modelcontextprotocol/sdk`; without it,
 * an FsError (`FS_UNSUPPORTED`) names the package and the command that installs it.
 */
export function createMcpServer(options: CreateMcpServerOptions): McpServer {
  // The SDK is an optional peer, loaded on first use (its CommonJS build, so this stays synchronous).
  const { McpServer } = requirePeer<typeof import('@modelcontextprotocol/sdk/server/mcp.js')>('@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/server/mcp.js', 'dsh-fs/mcp');
  const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } = requirePeer<typeof import('@modelcontextprotocol/sdk/types.js')>(
    '@modelcontextprotocol/sdk',
    '@modelcontextprotocol/sdk/types.js',
    'dsh-fs/mcp',
  );
  const policy = options.policy ?? createObservationPolicy();
  const history = hasHistory(options.fs);
  const rewind: HarnessPlugin[] = history && options.rewindTool === true ? [{ name: 'rewind-tool', apply: (ctx) => ctx.tools.register(createRewindTool()) }] : [];
  const plugins = [...(options.tools ?? [fsTools(), searchTools()]), ...rewind];
  const log = options.log ?? (() => {});
  const owner: Owner = options.owner ?? {};
  const run = options.run ?? (<T>(call: (fs: FileSystem) => Promise<T>) => call(options.fs));

  let current: { fs: FileSystem; ctx: HarnessContext } | undefined;
  const harnessFor = (fs: FileSystem): HarnessContext => {
    if (current?.fs !== fs) {
      // Plugins are objects applied once per harness; a harness over a newer FileSystem reuses them.
      const ctx = createHarness({
        fs,
        plugins: [policy, ...plugins],
        onListenerError: (error, info) => log(`an ${info.event} listener failed for "${info.target.displayPath}": ${String(error)}`),
      });
      current = { fs, ctx };
    }
    return current.ctx;
  };

  const first = harnessFor(options.fs);
  const listings = first.tools.list();
  const tools = listings.map((t) => mcpTool(t, options.destructive ?? true));
  const names = new Set(listings.map((t) => t.name));

  const server = new McpServer(
    { name: options.name ?? 'dsh-fs', version: options.version ?? '0.0.0' },
    {
      capabilities: { tools: { listChanged: false } },
      instructions:
        options.instructions ??
        `Tool paths are absolute or relative to ${first.cwd}. Read a file (any part) before you overwrite or edit it; if it changed since, read it again.`,
    },
  );
  const dropped = keepDroppedArguments();
  const connect = server.connect.bind(server);
  server.connect = (transport) => {
    dropped.watch(transport);
    return connect(transport);
  };
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const args = dropped.take(extra.requestId) ?? request.params.arguments ?? {};
    if (!names.has(name)) {
      // A plain error with the code: the client adds the "MCP error -32602:" prefix itself (McpError's own made it twice).
      throw Object.assign(new Error(`unknown tool ${JSON.stringify(name)}; available tools: ${[...names].join(', ')}`), { code: ErrorCode.InvalidParams });
    }
    let result: ToolResult;
    // The change a call makes is labelled on its checkpoint: which tool, for which client.
    const label = { owner: server.server.getClientVersion()?.name ?? 'mcp', source: `tool:${name}` };
    const execute = (fs: FileSystem) => harnessFor(fs).tools.execute(name, args, { owner, signal: extra.signal });
    try {
      result = await run((fs) => (hasHistory(fs) ? fs.label(label, () => execute(fs)) : execute(fs)), extra.signal);
    } catch (err) {
      // The host's wrapper failed (a lock, a damaged sandbox): still a result the model can read.
      result = errorResult(err, `${name} failed`);
    }
    log(`${name}: ${result.isError ? result.error.code : 'ok'}`);
    return toCallToolResult(result);
  });
  if (history) registerCheckpoints(server, () => run(async (fs) => (hasHistory(fs) ? fs.checkpoints() : []), new AbortController().signal));
  return server;
}
