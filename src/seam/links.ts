import { posix } from 'node:path';
import { FsError, throwIfAborted, toFsError } from './errors.js';
import type { KeyedMutex } from './lock.js';
import { describeType, pathChild } from './path.js';
import { FsTargetKey, type FsLinkRenameOptions, type FsOpOptions, type FsProvider, type FsTarget } from './types.js';

/** Longest link text accepted (Linux's PATH_MAX less the NUL). */
const MAX_LINK_TEXT = 4095;

/** How a provider derives a child's key: its own `childKey`, else by joining paths. */
export function childKeyOf(provider: FsProvider): (parent: FsTarget, name: string) => FsTargetKey {
  return provider.childKey?.bind(provider) ?? ((parent, name) => FsTargetKey(pathChild(parent.targetKey, name)));
}

/**
 * K1's `noFollow` resolve: the parent directory as the provider resolves it, and the last name
 * taken as written (its key from the provider's `childKey`, or joined as a path). A provider whose
 * keys are not paths and that has no `childKey` gets FS_UNSUPPORTED rather than a guessed key.
 */
export async function resolveNoFollow(provider: FsProvider, abs: string, signal: AbortSignal | undefined): Promise<FsTarget> {
  if (abs === '/') return provider.resolve(abs, { signal });
  const parent = await provider.resolve(posix.dirname(abs), { signal });
  if (provider.childKey === undefined && !parent.targetKey.startsWith('/')) {
    throw new FsError('FS_UNSUPPORTED', `cannot resolve "${abs}" without following links: this provider's targets are not paths`);
  }
  return { targetKey: childKeyOf(provider)(parent, posix.basename(abs)), displayPath: abs };
}

/** K1 and K2 over a provider: the link text checked, the names' locks held, a store without links refused. */
export function createLinkOps(provider: FsProvider, locks: KeyedMutex) {
  return {
    async symlink(target: FsTarget, linkText: string, options?: FsOpOptions): Promise<void> {
      const what = `cannot create the link "${target.displayPath}"`;
      const signal = options?.signal;
      if (typeof linkText !== 'string') throw new FsError('FS_INVALID_ARGUMENT', `${what}: the link text must be a string, got ${describeType(linkText)}`);
      if (linkText.length === 0 || linkText.includes('\0') || Buffer.byteLength(linkText) > MAX_LINK_TEXT) {
        throw new FsError('FS_INVALID_ARGUMENT', `${what}: the link text must be 1 to ${MAX_LINK_TEXT} bytes without NUL`);
      }
      throwIfAborted(signal, what);
      const create = provider.symlink?.bind(provider);
      if (create === undefined) throw new FsError('FS_UNSUPPORTED', `${what}: this filesystem has no symbolic links`);
      try {
        await locks.run(target.targetKey, () => create(target, linkText, { signal }));
      } catch (err) {
        throw toFsError(err, what);
      }
    },

    async readlink(target: FsTarget, options?: FsOpOptions): Promise<string> {
      const what = `cannot read the link "${target.displayPath}"`;
      throwIfAborted(options?.signal, what);
      const read = provider.readlink?.bind(provider);
      if (read === undefined) throw new FsError('FS_UNSUPPORTED', `${what}: this filesystem has no symbolic links`);
      try {
        const text = await read(target, { signal: options?.signal });
        if (typeof text !== 'string') throw new FsError('FS_IO_ERROR', `${what}: the provider returned no text`);
        return text;
      } catch (err) {
        throw toFsError(err, what);
      }
    },

    async removeLink(target: FsTarget, options?: FsOpOptions): Promise<void> {
      const what = `cannot remove the link "${target.displayPath}"`;
      throwIfAborted(options?.signal, what);
      const remove = provider.removeLink?.bind(provider);
      if (remove === undefined) throw new FsError('FS_UNSUPPORTED', `${what}: this filesystem has no symbolic links`);
      try {
        await locks.run(target.targetKey, () => remove(target, { signal: options?.signal }));
      } catch (err) {
        throw toFsError(err, what);
      }
    },

    async renameLink(from: FsTarget, to: FsTarget, options?: FsLinkRenameOptions): Promise<void> {
      const what = `cannot move the link "${from.displayPath}" to "${to.displayPath}"`;
      const signal = options?.signal;
      const replace = options?.replace ?? false;
      if (typeof replace !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `${what}: replace must be a boolean, got ${describeType(replace)}`);
      throwIfAborted(signal, what);
      const move = provider.renameLink?.bind(provider);
      if (move === undefined) throw new FsError('FS_UNSUPPORTED', `${what}: this filesystem has no symbolic links`);
      // Both names held in one order, as rename does.
      const [first, second] = [from.targetKey, to.targetKey].sort();
      const run = () => move(from, to, { replace, signal });
      try {
        await (first === second ? locks.run(first!, run) : locks.run(first!, () => locks.run(second!, run)));
      } catch (err) {
        throw toFsError(err, what);
      }
    },
  };
}
