/**
 * A workspace kept in one PostgreSQL table (see schema.ts), shared by every process and machine
 * that opens it. Every file mutation is one conditional statement (native compare-and-swap);
 * directories are rows, and the table's foreign key keeps the tree whole under concurrency.
 */
import type { FsProvider } from '../../seam/index.js';
import { createContext, type PostgresProviderOptions } from './provider-context.js';
import { mkdir, rmdir } from './provider-dirs.js';
import { readlink, removeLink, renameLink, symlink } from './provider-links.js';
import { listDir } from './provider-list.js';
import { read, resolve, stat } from './provider-read.js';
import { rename } from './provider-rename.js';
import { createPostgresWatch } from './provider-watch.js';
import { searchCandidates } from './provider-search.js';
import { openRead, swapFrom } from './provider-stream.js';
import { walk } from './provider-walk.js';
import { applyBatch, modify, setExecutable, swap } from './provider-write.js';

export { DEFAULT_MAX_FILE_BYTES, type PostgresProviderOptions } from './provider-context.js';

export interface PostgresProvider extends FsProvider {
  readonly root: string;
  readonly workspace: string;
  readonly maxFileBytes: number;
  /** Creates the schema and the root's rows if needed; every operation awaits it first. */
  ready(): Promise<void>;
}

export function createPostgresProvider(options: PostgresProviderOptions): PostgresProvider {
  const ctx = createContext(options);
  const provider: PostgresProvider = {
    root: ctx.root,
    cwd: ctx.cwd,
    workspace: ctx.ws,
    maxFileBytes: ctx.maxFileBytes,
    ready: ctx.ready,

    resolve: (path, opts) => resolve(ctx, path, opts),
    stat: (target, opts) => stat(ctx, target, opts),
    read: (target, opts) => read(ctx, target, opts),
    openRead: (target, opts) => openRead(ctx, target, opts),
    swap: (target, request) => swap(ctx, target, request),
    swapFrom: (target, request) => swapFrom(ctx, target, request),
    modify: (target, request, change) => modify(ctx, target, request, change),
    applyBatch: (swaps, opts) => applyBatch(ctx, swaps, opts),
    setExecutable: (target, executable, opts) => setExecutable(ctx, target, executable, opts),
    symlink: (target, linkText, opts) => symlink(ctx, target, linkText, opts),
    readlink: (target, opts) => readlink(ctx, target, opts),
    removeLink: (target, opts) => removeLink(ctx, target, opts),
    renameLink: (from, to, opts) => renameLink(ctx, from, to, opts),
    mkdir: (target, opts) => mkdir(ctx, target, opts),
    rmdir: (target, opts) => rmdir(ctx, target, opts),
    rename: (from, to, opts) => rename(ctx, from, to, opts),
    listDir: (target, opts) => listDir(ctx, target, opts),
    watch: createPostgresWatch(ctx),
    searchCandidates: (root, query, opts) => searchCandidates(ctx, root, query, opts),
    // Through the object, so that a listDir replaced on it is the one the fallback walk uses.
    walk: (target, opts) => walk(ctx, target, opts, (dir, signal) => provider.listDir(dir, { signal })),
  };
  return provider;
}
