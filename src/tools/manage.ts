import { z } from 'zod';
import { FsError, isFsError, type FsVersion } from '../seam/index.js';
import type { Tool, ToolCall } from '../harness/index.js';
import { shownPath } from '../harness/tools.js';
import { NOT_BLANK } from './schemas.js';
import { withRemedy } from './errors.js';
import { deleteOutputSchema, moveOutputSchema } from './outputs.js';

// move and delete: the two tools that take content away. Both are guarded by the observation
// policy like an overwrite (fs/rename-intent, fs/remove-intent), and both are off unless asked
// for (`moveDeleteTools()`, `toolDefinitions({ allowDelete: true })`, `serve --allow-delete`).

const PATH = (what: string) =>
  z
    .string()
    .min(1, { message: 'must be a non-empty path', abort: true })
    .regex(NOT_BLANK, 'must not be blank')
    .describe(`${what}: absolute, or relative to the working directory.`);

export function createMoveSchema() {
  return z.strictObject({
    from_path: PATH('Path of the file or directory to move'),
    to_path: PATH('Its new path; missing parent directories are created'),
  });
}

export function createDeleteSchema() {
  return z.strictObject({ file_path: PATH('Path of the file to delete') });
}

export type MoveArgs = z.output<ReturnType<typeof createMoveSchema>>;
export type DeleteArgs = z.output<ReturnType<typeof createDeleteSchema>>;
export const moveSchema = createMoveSchema();
export const deleteSchema = createDeleteSchema();

export const MOVE_DESCRIPTION =
  'Move or rename a file or directory. Missing parent directories of to_path are created. Moving a file needs no prior ' +
  'read, but if you have read it, it must not have changed since. If to_path is an existing file, it is replaced only ' +
  'when you have read that file and it has not changed since; otherwise the call fails and you must read it first. ' +
  'An existing directory at to_path is never replaced: name the full new path (e.g. "dir/name.txt").';

export const DELETE_DESCRIPTION =
  'Delete a file (not a directory). Requires that you have read the file (any part, with read) or written or edited ' +
  'it, and that it has not changed since; otherwise the call fails and you must read the file, then retry.';

export interface MoveValue {
  readonly from: string;
  readonly to: string;
  readonly type: 'file' | 'directory';
  /** The moved file's version (unchanged by the move); absent for a directory. */
  readonly version?: FsVersion;
  /** A file at `to` was replaced. */
  readonly replaced: boolean;
}

export interface DeleteValue {
  readonly path: string;
  /** The version of the content removed. */
  readonly version: FsVersion;
  /** Its size in bytes. */
  readonly bytes: number;
}

export function renderMove(value: MoveValue): string {
  const what = value.type === 'directory' ? 'directory ' : '';
  const replaced = value.replaced ? ', replacing the file that was there' : '';
  return `Moved ${what}"${shownPath(value.from)}" to "${shownPath(value.to)}"${replaced}.`;
}

export function renderDelete(value: DeleteValue): string {
  return `Deleted "${shownPath(value.path)}" (${value.bytes} byte${value.bytes === 1 ? '' : 's'}).`;
}

const opts = (call: ToolCall) => (call.signal ? { signal: call.signal } : {});

/** An unread source gets this many tries when someone else keeps changing it between stat and move. */
const UNGUARDED_MOVE_TRIES = 3;

export function createMoveTool(): Tool<MoveArgs, MoveValue> {
  return {
    name: 'move',
    title: 'Move file',
    // Replacing a destination file loses its content; a second identical call finds no source.
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    outputSchema: moveOutputSchema,
    description: MOVE_DESCRIPTION,
    schema: createMoveSchema(),
    render: renderMove,
    async execute(args, call) {
      try {
        const from = await call.fs.resolve(args.from_path, { cwd: call.cwd, ...opts(call) });
        const to = await call.fs.resolve(args.to_path, { cwd: call.cwd, ...opts(call) });
        const guard = (await call.events.renameIntent(from, to, call.owner)) ?? { replace: true };
        for (let attempt = 1; ; attempt++) {
          const source = await call.fs.stat(from, opts(call));
          if (source === undefined) throw new FsError('FS_NOT_FOUND', `cannot move "${from.displayPath}": not found`);
          if (source.type === 'other') throw new FsError('FS_NOT_REGULAR_FILE', `cannot move "${from.displayPath}": not a regular file or directory`);
          const dest = await call.fs.stat(to, opts(call));
          // An unread file is moved at the version just seen, so the observation recorded under
          // its new name is of exactly the bytes that moved.
          const expect = source.type === 'file' ? (guard.expect ?? source.version) : undefined;
          try {
            await call.fs.rename(from, to, { ...(expect === undefined ? {} : { expect }), replace: guard.replace, ...opts(call) });
          } catch (err) {
            if (isFsError(err, 'FS_STALE_VERSION') && guard.expect === undefined && expect !== undefined && attempt < UNGUARDED_MOVE_TRIES) {
              const now = await call.fs.stat(from, opts(call));
              if (now?.type === 'file' && now.version !== expect) continue; // the unread source changed under us: take the new one
            }
            if (isFsError(err, 'FS_ALREADY_EXISTS') && guard.replace === false) throw destinationExists(from.displayPath, to.displayPath, await call.fs.stat(to, opts(call)), err);
            throw err;
          }
          if (from.targetKey !== to.targetKey) call.events.observed(from, { kind: 'absent' }, call.owner);
          if (expect !== undefined) call.events.observed(to, { kind: 'present', version: expect }, call.owner);
          const type = source.type;
          return {
            from: from.displayPath,
            to: to.displayPath,
            type,
            ...(expect === undefined ? {} : { version: expect }),
            replaced: dest?.type === 'file' && from.targetKey !== to.targetKey,
          };
        }
      } catch (err) {
        throw withRemedy(err, `cannot move "${args.from_path}" to "${args.to_path}"`);
      }
    },
  };
}

/** FS_ALREADY_EXISTS in the model's terms: read the file first, or pick another name for a directory. */
function destinationExists(from: string, to: string, dest: { type: string } | undefined, cause: unknown): FsError {
  if (dest?.type === 'file') {
    return new FsError('FS_NOT_OBSERVED', `cannot move "${from}" to "${to}": a file exists at the destination and has not been read in this session`, { cause });
  }
  const kind = dest?.type === 'directory' ? 'a directory' : 'something';
  return new FsError(
    'FS_ALREADY_EXISTS',
    `cannot move "${from}" to "${to}": ${kind} exists at the destination; give the full new path (e.g. "${to}/${from.slice(from.lastIndexOf('/') + 1)}"), or choose a path that does not exist`,
    { cause },
  );
}

export function createDeleteTool(): Tool<DeleteArgs, DeleteValue> {
  return {
    name: 'delete',
    title: 'Delete file',
    // Deleting again changes nothing more (the second call reports not found).
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    outputSchema: deleteOutputSchema,
    description: DELETE_DESCRIPTION,
    schema: createDeleteSchema(),
    render: renderDelete,
    async execute(args, call) {
      try {
        const target = await call.fs.resolve(args.file_path, { cwd: call.cwd, ...opts(call) });
        // Checked first so a directory is not answered with "read it first".
        const info = await call.fs.stat(target, opts(call));
        if (info === undefined) {
          call.events.observed(target, { kind: 'absent' }, call.owner);
          throw new FsError('FS_NOT_FOUND', `cannot delete "${target.displayPath}": not found`);
        }
        if (info.type === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `cannot delete "${target.displayPath}": it is a directory; delete removes files only`);
        if (info.type !== 'file') throw new FsError('FS_NOT_REGULAR_FILE', `cannot delete "${target.displayPath}": not a regular file`);
        const intent = await call.events.removeIntent(target, call.owner);
        await call.fs.remove(target, intent, opts(call));
        call.events.observed(target, { kind: 'absent' }, call.owner);
        // With a guard the removed bytes are exactly the observed version; without one, the stat's is the best known.
        const version = intent?.kind === 'replaceIfVersion' ? intent.version : info.version;
        return { path: target.displayPath, version, bytes: info.size ?? 0 };
      } catch (err) {
        throw withRemedy(err, `cannot delete "${args.file_path}"`);
      }
    },
  };
}
