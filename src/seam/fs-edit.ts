import { FsError } from './errors.js';
import { editBytes } from './edit.js';
import { call } from './fs-call.js';
import { canStream, editLarge, tooLargeToHold } from './fs-large.js';
import { LargeFile } from './mutate.js';
import { checkIntent, withBytes, writtenVersion } from './fs-checks.js';
import type { FsContext } from './fs-context.js';
import { assertWritableText, crlfToLf } from './text.js';
import type { FileSystem, FsEditOutcome, FsEditRequest, FsTarget, FsTextWriteOptions, FsVersion, FsWriteIntent } from './types.js';

/** editText (E1–E7): the provider's own edit when it has one, else the edit engine over mutate. */
export function createEditText(ctx: FsContext): FileSystem['editText'] {
  const { provider, locks, mutate } = ctx;
  return async function editText(
    target: FsTarget,
    edit: FsEditRequest,
    guard?: { readonly version: FsVersion },
    opts?: FsTextWriteOptions,
  ): Promise<FsEditOutcome> {
    ctx.checkTarget(target);
    const request = checkEdit(edit);
    if (guard !== undefined) checkIntent({ kind: 'replaceIfVersion', version: guard?.version }, false);
    const what = `cannot edit "${target.displayPath}"`;
    const signal = opts?.signal;
    const bytesWanted = withBytes(opts);
    // A native edit does not hand back the bytes; asked for them, the seam edits itself.
    if (provider.editText && !bytesWanted) {
      const native = provider.editText.bind(provider);
      return call(what, signal, () => locks.run(target.targetKey, () => native(target, request, guard, { signal })));
    }
    let outcome: Omit<FsEditOutcome, 'version'> | undefined;
    const intent: FsWriteIntent | undefined = guard && { kind: 'replaceIfVersion', version: guard.version };
    let done;
    try {
      done = await call(what, signal, () =>
        mutate(target, what, signal, intent, (current) => {
          if (current === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
          const edited = editBytes(current.bytes, request, what);
          outcome = { replacements: edited.replacements, lines: edited.lines, ...(bytesWanted ? { replaced: current.bytes, published: edited.bytes } : {}) };
          return edited.bytes;
        }),
      );
    } catch (err) {
      if (!(err instanceof LargeFile)) throw err;
      // Too large to hold: streamed through the edit, where the provider can (no bytes handed back).
      if (!canStream(provider)) throw tooLargeToHold(what, ctx.maxTextBytes, err);
      return call(what, signal, () => editLarge(ctx, provider, target, request, intent, what, signal));
    }
    return { version: writtenVersion(done, what), ...outcome! };
  };
}

function checkEdit(edit: unknown): Required<FsEditRequest> {
  const e = edit as Partial<FsEditRequest> | null;
  if (typeof e !== 'object' || e === null) throw new FsError('FS_INVALID_ARGUMENT', 'edit must be an object');
  if (typeof e.oldString !== 'string' || e.oldString.length === 0) {
    throw new FsError('FS_INVALID_ARGUMENT', 'old_string must be a non-empty string');
  }
  assertWritableText(e.oldString, 'old_string');
  assertWritableText(e.newString, 'new_string');
  if (crlfToLf(e.oldString) === crlfToLf(e.newString)) {
    throw new FsError('FS_INVALID_ARGUMENT', 'old_string and new_string are identical; there is nothing to change');
  }
  if (e.replaceAll !== undefined && typeof e.replaceAll !== 'boolean') {
    throw new FsError('FS_INVALID_ARGUMENT', 'replace_all must be a boolean');
  }
  return { oldString: e.oldString, newString: e.newString, replaceAll: e.replaceAll ?? false };
}
