import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { HarnessPlugin } from '../harness/index.js';
import { createMcpServer } from '../mcp/index.js';
import { fsTools, searchTools } from '../tools/index.js';
import type { Workspace } from './workspace.js';

export interface McpServerOptions {
  readonly version: string;
  /** One line of diagnostics (the CLI sends them to stderr; stdout carries only MCP). */
  readonly log?: (line: string) => void;
  /** The tool plugins (default: read/write/edit and the search tools). */
  readonly tools?: () => readonly HarnessPlugin[];
  /** The tools include move and delete: the instructions say so. */
  readonly moveDelete?: boolean;
  /** Serve the `rewind` tool (a sandbox only). */
  readonly rewindTool?: boolean;
}

export interface DshFsMcpServer {
  readonly server: McpServer;
  /** Resolves when every tool call that has started has finished. */
  idle(): Promise<void>;
}

const defaultTools = (): HarnessPlugin[] => [fsTools(), searchTools()];

/**
 * The embeddable server (`dsh-fs/mcp`) over a workspace: each call runs under the workspace's
 * lock, on its current FileSystem (a sandbox reloaded after another process committed is a new
 * one). The server is one MCP session, so all its calls share one owner.
 */
export async function createDshFsMcpServer(workspace: Workspace, options: McpServerOptions): Promise<DshFsMcpServer> {
  const inflight = new Set<Promise<unknown>>();
  const fs = await workspace.use(async (fs) => fs);
  const server = createMcpServer({
    fs,
    tools: (options.tools ?? defaultTools)(),
    name: 'dsh-fs',
    version: options.version,
    instructions: instructions(workspace, options.moveDelete === true),
    destructive: workspace.mode === 'direct',
    rewindTool: options.rewindTool === true,
    owner: `mcp-session-${randomUUID()}`,
    ...(options.log ? { log: options.log } : {}),
    run: (call, signal) => {
      const running = workspace.use(call, { signal });
      inflight.add(running);
      void running.then(
        () => inflight.delete(running),
        () => inflight.delete(running),
      );
      return running;
    },
  });
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

function instructions(workspace: Workspace, moveDelete: boolean): string {
  const base =
    `Files live under ${workspace.root}; tool paths are absolute or relative to it. ` +
    'Read a file (any part) before you overwrite or edit it; if it changed since, read it again.';
  const remove = moveDelete ? ' Move or delete files with the move and delete tools, not by rewriting them; the same read-first rule applies.' : '';
  return workspace.mode === 'sandbox'
    ? `${base}${remove} Changes are kept in a sandbox that a person reviews and commits; the directory itself changes only then.`
    : `${base}${remove}`;
}
