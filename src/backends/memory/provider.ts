import type { Volume } from 'memfs';
import { createChangeHub, reportChanges, type CreateFsOptions, type FsProvider } from '../../seam/index.js';
import { createContext } from './context.js';
import { mkdir, rmdir } from './dirs.js';
import { readlink, removeLink, renameLink, symlink } from './links.js';
import { listDir, walk } from './list.js';
import { openRead, read, resolve, stat } from './read.js';
import { rename } from './rename.js';
import { restore, seed, snapshot, type MemorySnapshot, type MemoryTree } from './snapshot.js';
import { applyBatch, modify, setExecutable, swap, swapFrom } from './write.js';

export type { MemoryEntry, MemorySnapshot, MemoryTree } from './snapshot.js';

export interface MemoryFsOptions extends CreateFsOptions {
  /** Initial content; relative paths are taken relative to `cwd`. */
  readonly files?: MemoryTree;
}

export interface MemoryProvider extends FsProvider {
  /** The instance's own memfs Volume, for out-of-band changes in tests. */
  readonly volume: Volume;
  snapshot(): MemorySnapshot;
  restore(snapshot: MemorySnapshot): void;
}

export function createMemoryProvider(options: { files?: MemoryTree; cwd?: string } = {}): MemoryProvider {
  const ctx = createContext(options.cwd);
  seed(ctx, options.files ?? {});
  const hub = createChangeHub();
  const provider: MemoryProvider = {
    cwd: ctx.cwd,
    volume: ctx.vol,

    resolve: (path) => resolve(ctx, path),
    stat: (target, options) => stat(ctx, target, options),
    read: (target, opts) => read(ctx, target, opts),
    swap: (target, request) => swap(ctx, target, request),
    modify: (target, request, change) => modify(ctx, target, request, change),
    openRead: (target, opts) => openRead(ctx, target, opts),
    swapFrom: (target, request) => swapFrom(ctx, target, request),
    applyBatch: (swaps) => applyBatch(ctx, swaps),
    setExecutable: (target, executable) => setExecutable(ctx, target, executable),
    symlink: (target, linkText) => symlink(ctx, target, linkText),
    readlink: (target) => readlink(ctx, target),
    removeLink: (target) => removeLink(ctx, target),
    renameLink: (from, to, opts) => renameLink(ctx, from, to, opts),
    mkdir: (target) => mkdir(ctx, target),
    rmdir: (target, opts) => rmdir(ctx, target, opts),
    rename: (from, to, opts) => rename(ctx, from, to, opts),
    // Through the object, so that a listDir replaced on it is the one that lists the top.
    walk: (target, opts) => walk(ctx, target, opts, (dir, signal) => provider.listDir(dir, { signal })),
    listDir: (target, opts) => listDir(ctx, target, opts),
    snapshot: () => snapshot(ctx),
    restore: (snap: MemorySnapshot) => {
      restore(ctx, snap);
      // Everything may differ now: watchers re-read what they depend on.
      hub.emit({ kind: 'overflow', path: '/' });
    },
  };
  // Changes made through the provider are reported to `watch`; the volume's own (tests) are not.
  return reportChanges(provider, hub);
}
