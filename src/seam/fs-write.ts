import { FsError } from './errors.js';
import { call } from './fs-call.js';
import { canStream, tooLargeToHold, writeTextLarge } from './fs-large.js';
import { LargeFile } from './mutate.js';
import { checkIntent, durabilityOf, withBytes, writtenVersion } from './fs-checks.js';
import type { FsContext } from './fs-context.js';
import { describeType } from './path.js';
import { assertWritableText, textForWrite } from './text.js';
import type { FileSystem, FsOpOptions, FsTarget, FsTextWriteOptions, FsWriteIntent, FsWriteOptions, FsWriteOutcome } from './types.js';

/** Whole-file writes and removals through the one write protocol (mutate), and flush. */
export function createWriteOps(ctx: FsContext): Pick<FileSystem, 'writeText' | 'writeBytes' | 'remove' | 'flush'> {
  const { provider, mutate, rootGuard } = ctx;
  return {
    async writeText(target: FsTarget, content: string, intent?: FsWriteIntent, opts?: FsTextWriteOptions): Promise<FsWriteOutcome> {
      ctx.checkTarget(target);
      assertWritableText(content, 'content');
      checkIntent(intent, true);
      const what = `cannot write "${target.displayPath}"`;
      let replaced: Uint8Array | null = null;
      let published: Uint8Array = new Uint8Array();
      // L4/L5 need the existing file's BOM and line-ending style, so this write reads it first.
      let done;
      try {
        done = await call(what, opts?.signal, () =>
          mutate(target, what, opts?.signal, intent, (current) => {
            replaced = current?.bytes ?? null;
            published = textForWrite(content, current?.bytes);
            return published;
          }),
        );
      } catch (err) {
        if (!(err instanceof LargeFile)) throw err;
        // Too large to hold: its style is found by streaming it, and the bytes replaced are not handed back.
        if (!canStream(provider)) throw tooLargeToHold(what, ctx.maxTextBytes, err);
        const large = await call(what, opts?.signal, () => writeTextLarge(ctx, provider, target, content, intent, what, opts?.signal));
        return { operation: 'update', version: writtenVersion(large.done, what), size: large.bytes.byteLength };
      }
      const outcome = { operation: done.existed ? 'update' : 'create', version: writtenVersion(done, what), size: published.byteLength } as const;
      return withBytes(opts) ? { ...outcome, replaced, published } : outcome;
    },

    async writeBytes(target: FsTarget, bytes: Uint8Array, intent?: FsWriteIntent, opts?: FsWriteOptions): Promise<FsWriteOutcome> {
      ctx.checkTarget(target);
      if (!(bytes instanceof Uint8Array)) {
        throw new FsError('FS_INVALID_ARGUMENT', `bytes must be a Uint8Array, got ${describeType(bytes)}`);
      }
      checkIntent(intent, true);
      const what = `cannot write "${target.displayPath}"`;
      const copy = new Uint8Array(bytes);
      // Exact bytes depend on nothing the file holds: one swap, and the existing file is never read.
      const durability = durabilityOf(opts);
      const done = await call(what, opts?.signal, () => mutate(target, what, opts?.signal, intent, copy, durability));
      return { operation: done.existed ? 'update' : 'create', version: writtenVersion(done, what), size: copy.byteLength };
    },

    async remove(target: FsTarget, intent?: FsWriteIntent, opts?: FsWriteOptions): Promise<void> {
      ctx.checkTarget(target);
      checkIntent(intent, false);
      const what = `cannot remove "${target.displayPath}"`;
      const durability = durabilityOf(opts);
      const done = await call(what, opts?.signal, async () => {
        await rootGuard.refuse(what, 'it is the root', target);
        return mutate(target, what, opts?.signal, intent, null, durability);
      });
      if (!done.existed) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    },

    async flush(directories: readonly FsTarget[], opts?: FsOpOptions): Promise<void> {
      if (!Array.isArray(directories)) throw new FsError('FS_INVALID_ARGUMENT', `directories must be an array of targets, got ${describeType(directories)}`);
      for (const d of directories) ctx.checkTarget(d);
      if (!provider.flush || directories.length === 0) return;
      const flush = provider.flush.bind(provider);
      await call('cannot flush to disk', opts?.signal, () => flush(directories, { signal: opts?.signal }));
    },
  };
}
