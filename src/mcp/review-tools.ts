import { z } from 'zod';
import type { HarnessPlugin, Tool } from '../harness/index.js';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { overlayCore } from '../backends/overlay/compose.js';
import { openReview, type FeedbackStore, type ReviewFile, type ReviewResult } from '../review/index.js';
import { FsError, type FileSystem } from '../seam/index.js';

// Review by hunk over MCP, for a supervising client (`dsh-fs serve --tools review`). Never served
// by default: an agent that could call these would approve its own changes.

const hunkSchema = z.strictObject({
  id: z.string(),
  oldStart: z.number(),
  oldLines: z.number(),
  newStart: z.number(),
  newLines: z.number(),
  lines: z.array(z.string()),
});
const fileSchema = z.strictObject({
  path: z.string(),
  status: z.enum(['added', 'modified', 'deleted']),
  kind: z.enum(['text', 'binary', 'symlink', 'mode', 'directory']),
  id: z.string(),
  hunks: z.array(hunkSchema),
});
const listOutput = z.strictObject({ files: z.array(fileSchema) });
const decideOutput = z.strictObject({
  accepted: z.array(z.string()),
  rejected: z.array(z.string()),
  conflicts: z.array(z.strictObject({ path: z.string(), code: z.string(), message: z.string() })),
});
const listSchema = z.strictObject({
  paths: z.array(z.string().min(1)).optional().describe('Only these files or directories (relative to the project root); default: all.'),
});
const decideSchema = z.strictObject({
  decisions: z
    .array(
      z.strictObject({
        id: z.string().min(1).describe('A hunk id, or a file id for the whole file (from review_list).'),
        decision: z.enum(['accept', 'reject']),
        reason: z.string().optional().describe('For a rejection: why, told to the agent on its next tool result.'),
      }),
    )
    .min(1),
});

function sandboxOf(fs: FileSystem): OverlayFileSystem {
  if (overlayCore(fs as OverlayFileSystem) === undefined) throw new FsError('FS_UNSUPPORTED', 'review needs a sandbox (serve --mode sandbox)');
  return fs as OverlayFileSystem;
}

/** The tools `review_list` and `review_decide`; feedback waits in `feedback` (default: with the sandbox object). */
export function reviewTools(options: { readonly feedback?: FeedbackStore } = {}): HarnessPlugin {
  const open = (fs: FileSystem) => openReview(sandboxOf(fs), options.feedback ? { feedback: options.feedback } : {});
  const list: Tool<z.output<typeof listSchema>, { files: ReviewFile[] }> = {
    name: 'review_list',
    title: 'List changes to review',
    hints: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
    description: "The sandbox's changes as files and hunks (unified-diff lines), each with a stable id for review_decide.",
    schema: listSchema,
    outputSchema: listOutput,
    execute: async (args, call) => ({ files: await open(call.fs).files(args.paths) }),
    render: (v) => (v.files.length === 0 ? 'No changes.' : JSON.stringify(v, null, 1)),
  };
  const decide: Tool<z.output<typeof decideSchema>, ReviewResult> = {
    name: 'review_decide',
    title: 'Accept or reject changes',
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    description:
      'Accept hunks (written to the project folder) or reject them (reverted in the sandbox, the reason told to the agent), as one change. ' +
      'An id whose hunk changed since it was listed refuses the whole call.',
    schema: decideSchema,
    outputSchema: decideOutput,
    execute: async (args, call) => open(call.fs).decide(args.decisions.map((d) => ({ id: d.id, decision: d.decision, ...(d.reason === undefined ? {} : { reason: d.reason }) }))),
    render: (v) =>
      `Accepted ${v.accepted.length}, rejected ${v.rejected.length}` +
      (v.conflicts.length === 0 ? '.' : `; conflicts (nothing written): ${v.conflicts.map((c) => `${c.path}: ${c.message}`).join('; ')}`),
  };
  return {
    name: 'review-tools',
    apply: (ctx) => {
      ctx.tools.register(list);
      ctx.tools.register(decide);
    },
  };
}
