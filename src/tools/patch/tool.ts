import { z } from 'zod';
import { throwIfAborted, type FsVersion } from '../../seam/index.js';
import type { HarnessContext, HarnessPluginObject, Tool, ToolCall } from '../../harness/index.js';
import { shownPath } from '../../harness/tools.js';
import { diffFields, type DiffFields } from '../diff.js';
import { withRemedy } from '../errors.js';
import type { LoosenedHunk } from './apply.js';
import { LEVEL_NOTES } from './match.js';
import { parsePatch, type PatchOperation } from './parse.js';
import { planPatch } from './plan.js';
import { publishPlan } from './publish.js';

export interface PatchFileChange extends DiffFields {
  readonly path: string;
  readonly operation: 'add' | 'update' | 'delete';
  /** Where an update moved the file. */
  readonly movedTo?: string;
  /** The file's version now; absent for a delete. */
  readonly version?: FsVersion;
  /** Hunks that matched only when whitespace or typographic punctuation was ignored. */
  readonly loosened: readonly LoosenedHunk[];
}

export interface PatchValue {
  readonly files: readonly PatchFileChange[];
}

export function createPatchSchema() {
  return z.strictObject({
    input: z
      .string()
      .min(1, 'must be the whole patch, from "*** Begin Patch" to "*** End Patch"')
      .describe('The entire patch, from "*** Begin Patch" to "*** End Patch".'),
  });
}

export type PatchArgs = z.output<ReturnType<typeof createPatchSchema>>;

/** The shape of `apply_patch`'s value (MCP's `outputSchema`). */
export const patchOutputSchema = z.strictObject({
  files: z.array(
    z.strictObject({
      path: z.string(),
      operation: z.enum(['add', 'update', 'delete']),
      movedTo: z.string().optional(),
      version: z.string().optional(),
      loosened: z.array(z.strictObject({ hunk: z.int(), level: z.enum(['trailing-whitespace', 'trimmed', 'unicode']) })),
      diff: z.string().optional(),
      diffTruncated: z.boolean().optional(),
    }),
  ),
});

export const PATCH_DESCRIPTION =
  'Apply a patch in the apply_patch (V4A) format to one or more files, all or nothing: if any file cannot be ' +
  'changed, no file is. Format:\n*** Begin Patch\n*** Add File: path\n+line of the new file\n*** Delete File: path\n' +
  '*** Update File: path\n*** Move to: new/path (optional)\n@@ a unique line above the change (optional)\n ' +
  'context line\n-removed line\n+added line\n*** End of File (optional: the hunk ends at the end of the file)\n' +
  '*** End Patch\nPaths are relative to the working directory. Updating, deleting or moving onto a file requires ' +
  'that you have read it (any part) or written it, and that it has not changed since; adding a file that already ' +
  'exists counts as overwriting it. Give about 3 lines of context around each change; when they occur more than ' +
  'once, add an "@@" line naming a unique line above the change. The result says when a hunk matched only after ' +
  'ignoring whitespace or typographic punctuation.';

const CODE = { add: 'A', update: 'M', delete: 'D' } as const;

export function renderPatch(value: PatchValue): string {
  const n = value.files.length;
  const lines = value.files.map((f) => {
    const name = f.movedTo === undefined ? `"${shownPath(f.path)}"` : `"${shownPath(f.path)}" → "${shownPath(f.movedTo)}"`;
    const loose = f.loosened.map((l) => `hunk ${l.hunk} matched ${LEVEL_NOTES[l.level]}`);
    return `${f.movedTo === undefined ? CODE[f.operation] : 'R'} ${name}${loose.length > 0 ? ` (${loose.join('; ')})` : ''}`;
  });
  return [`Applied the patch to ${n} file${n === 1 ? '' : 's'}:`, ...lines].join('\n');
}

/** Checks, publishes and records parsed operations: the work of `apply_patch` and `applyPatchOperation`. */
export async function runPatch(call: ToolCall, ops: readonly PatchOperation[]): Promise<PatchValue> {
  const plan = await planPatch(call, ops);
  throwIfAborted(call.signal, 'cannot apply the patch');
  const published = await publishPlan(call.fs, plan);
  const files: PatchFileChange[] = [];
  for (const { change, version } of published) {
    const { op, target, dest, current, bytes } = change;
    const path = target.displayPath;
    if (bytes === null) {
      call.events.observed(target, { kind: 'absent' }, call.owner);
      files.push({ path, operation: 'delete', loosened: [] });
      continue;
    }
    const at = dest?.target ?? target;
    if (dest !== undefined) call.events.observed(target, { kind: 'absent' }, call.owner);
    call.events.observed(at, { kind: 'present', version: version! }, call.owner);
    files.push({
      path,
      operation: op.kind === 'add' ? 'add' : 'update',
      ...(dest === undefined ? {} : { movedTo: dest.target.displayPath }),
      version: version!,
      loosened: change.loosened,
      ...diffFields(at.displayPath, current?.bytes, bytes),
    });
  }
  return { files };
}

export function createPatchTool(): Tool<PatchArgs, PatchValue> {
  return {
    name: 'apply_patch',
    title: 'Apply patch',
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    description: PATCH_DESCRIPTION,
    schema: createPatchSchema(),
    outputSchema: patchOutputSchema,
    render: renderPatch,
    async execute(args, call) {
      try {
        return await runPatch(call, parsePatch(args.input));
      } catch (err) {
        throw withRemedy(err, 'cannot apply the patch');
      }
    },
  };
}

/** The plugin that registers `apply_patch`. */
export function patchTools(): HarnessPluginObject {
  const tool = createPatchTool();
  return {
    name: 'patch-tools',
    apply(ctx: HarnessContext) {
      ctx.tools.register(tool);
    },
  };
}
