import { createApplyChanges } from './batch.js';
import { createFsContext, type CreateFsOptions } from './fs-context.js';
import { createDirOps } from './fs-dirs.js';
import { createEditText } from './fs-edit.js';
import { createLinkAndModeOps } from './fs-links.js';
import { createRename } from './fs-move.js';
import { createReadOps } from './fs-read.js';
import { createStreamBytes } from './fs-stream.js';
import { createResolveOps } from './fs-resolve.js';
import { createWalk } from './fs-walk.js';
import { createWatch } from './fs-watch.js';
import { createWriteBytesFrom } from './fs-write-from.js';
import { createWriteOps } from './fs-write.js';
import { createSearchCandidates, createSearchReads } from './fs-search.js';
import type { FileSystem, FsProvider } from './types.js';

export { DEFAULT_MAX_TEXT_BYTES, type CreateFsOptions } from './fs-context.js';
export { depthFirst, isRealSubdirectory, listOrSkip, narrowing, treeWalk, walkBatches, type FetchedTree } from './fs-walk.js';

/**
 * Turns a storage provider into the `ctx.fs` contract. All path rules (P1, lexical part of P2),
 * text rules (T1, L1–L5) and the edit engine (E1–E7) live here, once, for every provider.
 */
export function createFs(provider: FsProvider, options: CreateFsOptions = {}): FileSystem {
  const ctx = createFsContext(provider, options);
  const { root, cwd } = ctx;
  const { resolve, contains, childKey } = createResolveOps(ctx);
  const { stat, readText, streamText, readBytes } = createReadOps(ctx);
  const { listDir, mkdir, rmdir } = createDirOps(ctx);
  const { writeText, writeBytes, remove, flush } = createWriteOps(ctx);
  const links = createLinkAndModeOps(ctx);
  const searchCandidates = createSearchCandidates(ctx);
  const searchReads = createSearchReads(ctx);
  const watch = createWatch(ctx);
  const applyChanges = createApplyChanges({ provider: ctx.provider, locks: ctx.locks, rootGuard: ctx.rootGuard, quota: ctx.quota, checkTarget: (t) => ctx.checkTarget(t), fs: () => fs });

  // Members keep the order they always had: a caller can see it (Object.keys, a spread).
  const fs: FileSystem = {
    cwd,
    ...(root === undefined ? {} : { root }),
    resolve,
    contains,
    childKey,
    stat,
    readText,
    streamText,
    readBytes,
    streamBytes: createStreamBytes(ctx),
    listDir,
    writeText,
    writeBytes,
    editText: createEditText(ctx),
    remove,
    flush,
    applyChanges,
    mkdir,
    rmdir,
    rename: createRename(ctx, () => fs),
    walk: createWalk(ctx),
    setExecutable: links.setExecutable,
    symlink: links.symlink,
    readlink: links.readlink,
    removeLink: links.removeLink,
    renameLink: links.renameLink,
    writeBytesFrom: createWriteBytesFrom(ctx),
    ...(watch === undefined ? {} : { watch }),
    // Only where the provider can narrow a search; the search checks for it.
    ...(searchCandidates === undefined ? {} : { searchCandidates }),
    ...(searchReads === undefined ? {} : { searchReads }),
  };
  return fs;
}
