import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Tool } from '../harness/index.js';
import { shownPath } from '../harness/tools.js';
import { FsError, type FileSystem, type FsOpOptions } from '../seam/index.js';
import { settleAll } from '../seam/settle.js';

// Checkpoints over MCP: a resource that lists them, and an optional `rewind` tool. Asked of the
// served filesystem by shape, so any overlay (a sandbox in a directory or in a database) has them.

export interface ServedCheckpoint {
  readonly id: number;
  readonly time: number;
  readonly owner?: string;
  readonly source?: string;
  readonly paths: readonly string[];
}

/** The part of an overlay the server uses: its checkpoints, rewind and labels. */
export interface WithHistory extends FileSystem {
  checkpoints(): ServedCheckpoint[];
  rewind(id: number, options?: FsOpOptions & { readonly paths?: readonly string[] }): Promise<void>;
  label<T>(label: { owner?: string; source?: string }, fn: () => Promise<T>): Promise<T>;
}

export function hasHistory(fs: FileSystem): fs is WithHistory {
  const f = fs as Partial<WithHistory>;
  return typeof f.checkpoints === 'function' && typeof f.rewind === 'function' && typeof f.label === 'function';
}

export const CHECKPOINTS_URI = 'dsh-fs://checkpoints';

/** Lists the served sandbox's checkpoints as the resource `dsh-fs://checkpoints` (JSON, oldest first). */
export function registerCheckpoints(server: McpServer, read: () => Promise<readonly ServedCheckpoint[]>): void {
  server.registerResource(
    'checkpoints',
    CHECKPOINTS_URI,
    {
      title: 'Checkpoints',
      description: 'The sandbox checkpoints, oldest first: one per change, with id, time (ms since 1970), owner, source and the paths it changed.',
      mimeType: 'application/json',
    },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ checkpoints: await read() }) }] }),
  );
}

const rewindSchema = z.strictObject({
  to: z.number().int().positive().describe('The checkpoint id to go back to (see the resource dsh-fs://checkpoints).'),
  paths: z
    .array(z.string().min(1))
    .min(1)
    .optional()
    .describe('Rewind only these paths (and what lies below them); default: the whole sandbox.'),
});

const rewindOutputSchema = z.strictObject({
  to: z.number(),
  paths: z.array(z.string()).optional(),
  /** The checkpoint the rewind recorded; absent when the view already was as at `to`. */
  checkpoint: z.number().optional(),
});

export type RewindArgs = z.output<typeof rewindSchema>;
export type RewindValue = z.output<typeof rewindOutputSchema>;

/** The `rewind` tool: makes the sandbox (or some paths of it) what it was at a checkpoint. */
export function createRewindTool(): Tool<RewindArgs, RewindValue> {
  return {
    name: 'rewind',
    title: 'Rewind sandbox',
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description:
      'Undo changes: make the sandbox (or only `paths` and what lies below them) exactly what it was at checkpoint `to`. ' +
      'The rewind is itself a change and can be rewound. Files it changes must be read again before you edit them.',
    schema: rewindSchema,
    outputSchema: rewindOutputSchema,
    render: (v) =>
      `Rewound ${v.paths === undefined ? 'the sandbox' : v.paths.map((p) => `"${shownPath(p)}"`).join(', ')} to checkpoint ${v.to}` +
      (v.checkpoint === undefined ? ' (nothing changed).' : ` (recorded as checkpoint ${v.checkpoint}).`),
    async execute(args, call) {
      const fs = call.fs;
      if (!hasHistory(fs)) throw new FsError('FS_UNSUPPORTED', 'cannot rewind: the served filesystem keeps no checkpoints (only a sandbox does)');
      const opts = call.signal ? { signal: call.signal } : {};
      const paths = args.paths === undefined ? undefined : await settleAll(args.paths.map(async (p) => (await fs.resolve(p, { cwd: call.cwd, ...opts })).displayPath));
      const before = fs.checkpoints().at(-1)?.id;
      await fs.rewind(args.to, { ...opts, ...(paths === undefined ? {} : { paths }) });
      const after = fs.checkpoints().at(-1)?.id;
      return { to: args.to, ...(paths === undefined ? {} : { paths }), ...(after !== undefined && after !== before ? { checkpoint: after } : {}) };
    },
  };
}
