/**
 * For providers whose store changes only through themselves (in memory, an overlay): a hub that
 * fans changes out to watchers, and a wrapper that reports each successful mutation to it.
 */
import type { FsChangeListener, FsProviderChange } from './feed-types.js';
import type { FsProvider } from './provider.js';
import type { FsTarget } from './model.js';

export interface ChangeHub {
  /** Tells every watcher now (synchronously); a listener that throws is skipped. */
  emit(change: FsProviderChange): void;
  /** The SPI's `watch`: live at once. */
  watch(listener: FsChangeListener): Promise<() => void>;
  /** True while anyone watches (so that reporting costs nothing otherwise). */
  readonly watched: boolean;
}

export function createChangeHub(): ChangeHub {
  const listeners = new Set<FsChangeListener>();
  return {
    emit(change) {
      for (const listener of [...listeners]) {
        try {
          listener(change);
        } catch {
          // A watcher's failure is its own; the change is made and others are told.
        }
      }
    },
    watch(listener) {
      // A fresh function per call, so one listener watching twice is two subscriptions.
      const entry: FsChangeListener = (c) => listener(c);
      listeners.add(entry);
      return Promise.resolve(() => {
        listeners.delete(entry);
      });
    },
    get watched() {
      return listeners.size > 0;
    },
  };
}

/**
 * Replaces `provider`'s mutating members (in place, so late-bound calls through the object are
 * wrapped too) by ones that report each successful change to `hub`, and gives it `watch`.
 * `owner` names who is making changes now, when known.
 */
export function reportChanges<P extends FsProvider>(provider: P, hub: ChangeHub, owner?: () => string | undefined): P {
  const emit = (change: Omit<FsProviderChange, 'owner'>) => {
    if (!hub.watched) return;
    const who = owner?.();
    hub.emit(who === undefined ? change : { ...change, owner: who });
  };
  const key = (t: FsTarget) => t.targetKey as string;
  const { swap, swapFrom, modify, applyBatch, mkdir, rmdir, rename, setExecutable, symlink, removeLink, renameLink, editText } = provider;

  provider.swap = async (target, request) => {
    const result = await swap.call(provider, target, request);
    if (result.ok && request.bytes !== null) emit({ kind: 'write', path: key(target), ...(result.version === undefined ? {} : { version: result.version }) });
    else if (result.ok && result.existed) emit({ kind: 'remove', path: key(target) });
    return result;
  };
  if (swapFrom) {
    provider.swapFrom = async (target, request) => {
      const result = await swapFrom.call(provider, target, request);
      if (result.ok) emit({ kind: 'write', path: key(target), ...(result.version === undefined ? {} : { version: result.version }) });
      return result;
    };
  }
  if (modify) {
    provider.modify = async (target, request, change) => {
      const result = await modify.call(provider, target, request, change);
      if (result.ok) emit({ kind: 'write', path: key(target), ...(result.version === undefined ? {} : { version: result.version }) });
      return result;
    };
  }
  if (applyBatch) {
    provider.applyBatch = async (swaps, options) => {
      const result = await applyBatch.call(provider, swaps, options);
      if (result.ok) {
        swaps.forEach((s, i) => {
          const version = result.versions[i];
          if (s.bytes === null) emit({ kind: 'remove', path: key(s.target) });
          else emit({ kind: 'write', path: key(s.target), ...(version === undefined ? {} : { version }) });
        });
      }
      return result;
    };
  }
  provider.mkdir = async (target, options) => {
    await mkdir.call(provider, target, options);
    emit({ kind: 'mkdir', path: key(target) });
  };
  provider.rmdir = async (target, options) => {
    await rmdir.call(provider, target, options);
    emit({ kind: 'rmdir', path: key(target) });
  };
  provider.rename = async (from, to, options) => {
    await rename.call(provider, from, to, options);
    if (!hub.watched) return;
    // Still under the seam's locks: the version of what now reads at `to`, so a watcher can tell
    // its own move from another's.
    const info = await provider.stat(to, {}).catch(() => undefined);
    const version = info?.type === 'file' ? info.version : undefined;
    emit({ kind: 'rename', path: key(to), from: key(from), ...(version === undefined ? {} : { version }) });
  };
  if (setExecutable) {
    provider.setExecutable = async (target, executable, options) => {
      await setExecutable.call(provider, target, executable, options);
      emit({ kind: 'mode', path: key(target) });
    };
  }
  if (symlink) {
    provider.symlink = async (target, text, options) => {
      await symlink.call(provider, target, text, options);
      emit({ kind: 'link', path: key(target) });
    };
  }
  if (removeLink) {
    provider.removeLink = async (target, options) => {
      await removeLink.call(provider, target, options);
      emit({ kind: 'remove', path: key(target) });
    };
  }
  if (renameLink) {
    provider.renameLink = async (from, to, options) => {
      await renameLink.call(provider, from, to, options);
      emit({ kind: 'rename', path: key(to), from: key(from) });
    };
  }
  if (editText) {
    provider.editText = async (target, edit, guard, options) => {
      const outcome = await editText.call(provider, target, edit, guard, options);
      emit({ kind: 'write', path: key(target), version: outcome.version });
      return outcome;
    };
  }
  provider.watch = (listener) => hub.watch(listener);
  return provider;
}
