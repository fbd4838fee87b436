import { createFs, type CreateFsOptions } from '../seam/fs.js';
import { FsTargetKey, type FsOpOptions } from '../seam/model.js';
import type { FileSystem } from '../seam/types.js';
import type { FsProvider } from '../seam/provider.js';
import { throwIfAborted } from '../seam/errors.js';
import { symlinkKey, readlinkKey, removeLinkKey, renameLinkKey } from './links.js';
import { listKey, readKey, resolveKey, statKey } from './read.js';
import { mkdirKey, renameKey, rmdirKey } from './tree.js';
import { batchKeys, modifyKey, setExecutableKey, swapKey } from './write.js';
import type { FsStore, StoreTx } from './types.js';

export interface StoreFsOptions extends CreateFsOptions {
  /** Default directory for relative paths (default `/`). */
  readonly cwd?: string;
}

/**
 * A full provider over a transactional store: every operation is one transaction, so a rename of
 * a directory, a batch or a compare-and-swap is atomic for every process sharing the store.
 */
export function createStoreProvider(store: FsStore, options: Pick<StoreFsOptions, 'cwd'> = {}): FsProvider {
  const read = <T>(signal: AbortSignal | undefined, body: (tx: StoreTx) => Promise<T>) => {
    throwIfAborted(signal, 'the store was not read');
    return store.transaction(body, { readOnly: true });
  };
  const write = <T>(signal: AbortSignal | undefined, body: (tx: StoreTx) => Promise<T>) => {
    throwIfAborted(signal, 'the store was not changed');
    return store.transaction(body);
  };
  const op = (o: FsOpOptions) => o.signal;
  return {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    resolve: async (path, o) => ({ targetKey: FsTargetKey(await read(op(o), (tx) => resolveKey(tx, path))), displayPath: path }),
    stat: (target, o) => read(op(o), (tx) => statKey(tx, target.targetKey)),
    read: (target, o) => read(op(o), (tx) => readKey(tx, target, o)),
    listDir: (target, o) => read(op(o), (tx) => listKey(tx, target)),
    swap: (target, request) => write(op(request), (tx) => swapKey(tx, target, request)),
    modify: (target, request, change) => write(op(request), (tx) => modifyKey(tx, target, request, change)),
    applyBatch: (swaps, o) => write(op(o), (tx) => batchKeys(tx, swaps)),
    mkdir: (target, o) => write(op(o), (tx) => mkdirKey(tx, target)),
    rmdir: (target, o) => write(op(o), (tx) => rmdirKey(tx, target, o.recursive)),
    rename: (from, to, o) => write(op(o), (tx) => renameKey(tx, from, to, o)),
    setExecutable: (target, executable, o) => write(op(o), (tx) => setExecutableKey(tx, target, executable)),
    symlink: (target, text, o) => write(op(o), (tx) => symlinkKey(tx, target, text)),
    readlink: (target, o) => read(op(o), (tx) => readlinkKey(tx, target)),
    removeLink: (target, o) => write(op(o), (tx) => removeLinkKey(tx, target)),
    renameLink: (from, to, o) => write(op(o), (tx) => renameLinkKey(tx, from, to, o.replace)),
  };
}

/** The filesystem contract over a transactional store (see `FsStore`). */
export function createStoreFs(store: FsStore, options: StoreFsOptions = {}): FileSystem & { readonly provider: FsProvider } {
  const provider = createStoreProvider(store, options);
  const { cwd: _cwd, ...fsOptions } = options;
  return Object.assign(createFs(provider, fsOptions), { provider });
}
