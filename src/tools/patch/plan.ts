import {
  DEFAULT_MAX_TEXT_BYTES,
  FsError,
  decodeText,
  encodeKeepingBom,
  isFsError,
  textForWrite,
  toFsError,
  type FsTarget,
  type FsVersion,
} from '../../seam/index.js';
import type { ToolCall } from '../../harness/index.js';
import { applyHunks, type LoosenedHunk } from './apply.js';
import type { PatchOperation } from './parse.js';

// The check phase of apply_patch: every operation is resolved, authorised by the policy (the same
// intent events as write, edit, delete and move), read at its current version and computed, before
// anything is written. Its result is what the publish phase needs to write and to undo.

export interface Current {
  readonly bytes: Uint8Array;
  readonly version: FsVersion;
}

export interface PlannedChange {
  readonly op: PatchOperation;
  readonly target: FsTarget;
  /** The file as it is now (and as it must still be when published); undefined when absent. */
  readonly current: Current | undefined;
  /** The new content, at `dest` when moving; null for a delete. */
  readonly bytes: Uint8Array | null;
  readonly dest?: { readonly target: FsTarget; readonly current: Current | undefined };
  readonly loosened: readonly LoosenedHunk[];
}

const opts = (call: ToolCall) => (call.signal ? { signal: call.signal } : {});

/** The file's bytes and version; undefined when absent; directories and other entries refused. */
export async function readCurrent(call: ToolCall, target: FsTarget): Promise<Current | undefined> {
  const info = await call.fs.stat(target, opts(call));
  if (info === undefined) return undefined;
  if (info.type !== 'file') {
    const kind = info.type === 'directory' ? 'a directory' : 'not a regular file';
    throw new FsError('FS_NOT_REGULAR_FILE', `"${target.displayPath}" is ${kind}`);
  }
  try {
    const read = await call.fs.readBytes(target, { maxBytes: DEFAULT_MAX_TEXT_BYTES, ...opts(call) });
    return { bytes: read.bytes, version: read.version };
  } catch (err) {
    if (isFsError(err, 'FS_NOT_FOUND')) return undefined;
    throw err;
  }
}

/** The version the owner observed must still be the file's: the same rule as a guarded write. */
function checkFresh(target: FsTarget, expected: FsVersion | undefined, current: Current | undefined): void {
  if (expected === undefined) return;
  if (current === undefined) throw new FsError('FS_STALE_VERSION', `"${target.displayPath}" was removed since this session read it`);
  if (current.version !== expected) throw new FsError('FS_STALE_VERSION', `"${target.displayPath}" has changed since this session read it`);
}

/** Resolves every path; one file touched twice (including a move's destination) is refused. */
export async function resolveAll(call: ToolCall, ops: readonly PatchOperation[]): Promise<{ target: FsTarget; dest?: FsTarget }[]> {
  const seen = new Map<string, string>();
  const claim = (t: FsTarget, path: string) => {
    const other = seen.get(t.targetKey);
    if (other !== undefined) throw new FsError('FS_INVALID_ARGUMENT', `the patch touches "${t.displayPath}" twice ("${other}" and "${path}"); make one change per file`);
    seen.set(t.targetKey, path);
  };
  const out: { target: FsTarget; dest?: FsTarget }[] = [];
  for (const op of ops) {
    const target = await call.fs.resolve(op.path, { cwd: call.cwd, ...opts(call) });
    claim(target, op.path);
    if (op.kind === 'update' && op.moveTo !== undefined) {
      const dest = await call.fs.resolve(op.moveTo, { cwd: call.cwd, ...opts(call) });
      claim(dest, op.moveTo);
      out.push({ target, dest });
    } else out.push({ target });
  }
  return out;
}

/** Checks and computes one operation; throws an FsError naming the file. */
export async function planOne(call: ToolCall, op: PatchOperation, target: FsTarget, destTarget: FsTarget | undefined): Promise<PlannedChange> {
  if (op.kind === 'add') {
    const intent = await call.events.writeIntent(target, call.owner);
    const current = await readCurrent(call, target);
    if (current !== undefined && intent?.kind === 'createIfAbsent') {
      throw new FsError('FS_NOT_OBSERVED', `cannot add "${target.displayPath}": the file exists and has not been read in this session`);
    }
    checkFresh(target, intent?.kind === 'replaceIfVersion' ? intent.version : undefined, current);
    const content = op.lines.length === 0 ? '' : `${op.lines.join('\n')}\n`;
    return { op, target, current, bytes: textForWrite(content, current?.bytes), loosened: [] };
  }
  if (op.kind === 'delete') {
    const before = await readCurrent(call, target);
    if (before === undefined) throw new FsError('FS_NOT_FOUND', `cannot delete "${target.displayPath}": not found`);
    const intent = await call.events.removeIntent(target, call.owner);
    checkFresh(target, intent?.kind === 'replaceIfVersion' ? intent.version : undefined, before);
    return { op, target, current: before, bytes: null, loosened: [] };
  }
  const guard = await call.events.editIntent(target, call.owner);
  const current = await readCurrent(call, target);
  if (current === undefined) throw new FsError('FS_NOT_FOUND', `cannot update "${target.displayPath}": not found`);
  checkFresh(target, guard?.version, current);
  const { text, bom } = decodeText(current.bytes, `cannot update "${target.displayPath}"`);
  const applied = applyHunks(text, op.hunks, target.displayPath);
  const bytes = encodeKeepingBom(applied.text, bom);
  if (destTarget === undefined) return { op, target, current, bytes, loosened: applied.loosened };
  const rename = await call.events.renameIntent(target, destTarget, call.owner);
  const destCurrent = await readCurrent(call, destTarget);
  if (destCurrent !== undefined) {
    if (rename !== undefined && rename.replace === false) {
      throw new FsError('FS_NOT_OBSERVED', `cannot move "${target.displayPath}" to "${destTarget.displayPath}": a file exists there and has not been read in this session`);
    }
    checkFresh(destTarget, typeof rename?.replace === 'string' ? rename.replace : undefined, destCurrent);
  }
  return { op, target, current, bytes, dest: { target: destTarget, current: destCurrent }, loosened: applied.loosened };
}

/** Plans every operation; the first failure is thrown naming its file, with nothing written. */
export async function planPatch(call: ToolCall, ops: readonly PatchOperation[]): Promise<PlannedChange[]> {
  const targets = await resolveAll(call, ops);
  const plan: PlannedChange[] = [];
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    try {
      plan.push(await planOne(call, op, targets[i]!.target, targets[i]!.dest));
    } catch (err) {
      const error = toFsError(err, `cannot apply the patch to "${targets[i]!.target.displayPath}"`);
      throw new FsError(error.code, `${error.message} (file ${i + 1} of ${ops.length}, patch line ${op.line}); nothing was changed`, { cause: error });
    }
  }
  return plan;
}
