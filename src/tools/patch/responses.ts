import { FsError, canonicalPath, toFsError } from '../../seam/index.js';
import type { HarnessContext, Owner, ToolCall } from '../../harness/index.js';
import { withRemedy } from '../errors.js';
import { parseOperationBody, type PatchOperation } from './parse.js';
import { renderPatch, runPatch } from './tool.js';

// OpenAI's native apply_patch tool (Responses API `apply_patch_call`, Agents SDK `Editor`): one
// file operation per call, its `diff` a V4A body without the envelope. Each runs through the same
// check-then-publish path, policy and events as the `apply_patch` tool.

export interface ApplyPatchOperation {
  readonly type: 'create_file' | 'update_file' | 'delete_file';
  readonly path: string;
  /** The V4A body: `+` lines for create_file, hunks for update_file; absent for delete_file. */
  readonly diff?: string | null;
  /** update_file only: where the Agents SDK asks the file to move (the Responses API has no move). */
  readonly moveTo?: string | null;
}

/** What an `apply_patch_call_output` carries (and what an Agents SDK `Editor` method returns). */
export interface ApplyPatchOperationResult {
  readonly status: 'completed' | 'failed';
  readonly output: string;
}

export interface PatchOperationOptions {
  readonly owner: Owner;
  readonly signal?: AbortSignal;
  /** Directory relative paths resolve against (default: the harness cwd). */
  readonly cwd?: string;
}

function toOperation(operation: ApplyPatchOperation): PatchOperation {
  const bad = (why: string) => new FsError('FS_INVALID_ARGUMENT', `invalid apply_patch operation: ${why}`);
  if (typeof operation !== 'object' || operation === null) throw bad('expected an object { type, path, diff? }');
  const { type, path, diff, moveTo } = operation;
  if (typeof path !== 'string' || path.trim() === '') throw bad('path must be a non-empty string');
  if (moveTo !== undefined && moveTo !== null && (typeof moveTo !== 'string' || moveTo.trim() === '' || type !== 'update_file')) {
    throw bad('moveTo must be a non-empty string, on update_file only');
  }
  if (diff !== undefined && diff !== null && typeof diff !== 'string') throw bad('diff must be a string');
  switch (type) {
    case 'create_file':
      return parseOperationBody('add', path, diff ?? '');
    case 'update_file': {
      if (diff == null) throw bad('update_file needs a diff');
      const update = parseOperationBody('update', path, diff);
      return moveTo == null || update.kind !== 'update' ? update : { ...update, moveTo };
    }
    case 'delete_file':
      return { kind: 'delete', path, line: 1 };
    default:
      throw bad(`type must be create_file, update_file or delete_file, got ${JSON.stringify(type)}`);
  }
}

/**
 * Executes one `apply_patch_call` operation as `owner`. Never rejects: a failure is
 * `{ status: 'failed', output: 'Error: …' }` with the same message the `apply_patch` tool gives.
 */
export async function applyPatchOperation(ctx: HarnessContext, operation: ApplyPatchOperation, options: PatchOperationOptions): Promise<ApplyPatchOperationResult> {
  try {
    if (typeof options !== 'object' || options === null || options.owner === undefined || options.owner === '') {
      throw new FsError('FS_INVALID_ARGUMENT', 'applyPatchOperation needs { owner } naming the caller');
    }
    const call: ToolCall = {
      fs: ctx.fs,
      events: ctx.events,
      owner: options.owner,
      cwd: options.cwd === undefined ? ctx.cwd : canonicalPath(options.cwd, ctx.cwd),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    const value = await runPatch(call, [toOperation(operation)]);
    return { status: 'completed', output: renderPatch(value) };
  } catch (err) {
    const error = withRemedy(toFsError(err, 'cannot apply the patch'), 'cannot apply the patch');
    return { status: 'failed', output: `Error: ${error.message}` };
  }
}

/** The OpenAI Agents SDK `Editor` shape, over a harness, as one owner. */
export interface PatchEditor {
  createFile(operation: ApplyPatchOperation): Promise<ApplyPatchOperationResult>;
  updateFile(operation: ApplyPatchOperation): Promise<ApplyPatchOperationResult>;
  deleteFile(operation: ApplyPatchOperation): Promise<ApplyPatchOperationResult>;
}

export function createPatchEditor(ctx: HarnessContext, options: PatchOperationOptions): PatchEditor {
  // The method names the operation type, whatever the object says.
  const as = (type: ApplyPatchOperation['type']) => (operation: ApplyPatchOperation) => applyPatchOperation(ctx, { ...operation, type }, options);
  return { createFile: as('create_file'), updateFile: as('update_file'), deleteFile: as('delete_file') };
}
