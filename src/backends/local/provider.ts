import { FsTargetKey, type FsJournal, type FsOpOptions, type FsProvider, type FsSearchReadQuery, type FsTarget } from '../../seam/types.js';
import type { AnchorMode } from './anchor.js';
import { createContext, type LocalProviderOptions } from './context.js';
import { flush, mkdir, rmdir } from './dirs.js';
import { guard } from './errors.js';
import { beginJournal } from './journal.js';
import { pendingJournals } from './journal-recover.js';
import { listDir } from './list.js';
import { resolveKey, withRedirects } from './resolve.js';
import { checkSearchHelpers, searchReads } from './search-reads.js';
import { sweepTemps, TEMP_NAME_PATTERN, type SweepOptions } from './temps.js';
import { walk } from './walk.js';
import { lazily } from '../../lazy.js';

// Reads, writes, renames, links and modes: loaded by the first one, so opening a sandbox over the
// folder (a run, a status) does not load them.
const ops = lazily(async () => {
  const [read, swap, stream, modes, links, rename] = await Promise.all([
    import('./read.js'),
    import('./swap.js'),
    import('./stream.js'),
    import('./modes.js'),
    import('./links.js'),
    import('./rename.js'),
  ]);
  return { ...read, ...swap, ...stream, ...modes, ...links, ...rename };
});

export type { LocalIo, LocalProviderOptions } from './context.js';
export { isTempName, tempName, TEMP_NAME_PATTERN, type SweepOptions } from './temps.js';

export interface LocalProvider extends FsProvider {
  readonly root: string;
  readonly reservedNames: RegExp;
  readonly cwd: string;
  readonly anchoring: AnchorMode;
  readonly durable: boolean;
  readonly journal: FsJournal;
  /**
   * Removes temp files of this provider's own naming pattern (left by a process killed mid-write)
   * anywhere under the root; never any other file. Returns the real paths removed.
   */
  sweepTemps(options?: SweepOptions): Promise<string[]>;
}

/** A provider for a directory on local disk, confined to it, with atomic durable writes. */
export function createLocalProvider(options: LocalProviderOptions): LocalProvider {
  const ctx = createContext(options);
  const helpers = checkSearchHelpers(options.searchThreads, options.searchHelpers, options.pinSearchReads);
  return {
    root: ctx.root,
    cwd: ctx.cwd,
    // The seam refuses these names in every caller's path, so a file of this pattern is always ours.
    reservedNames: TEMP_NAME_PATTERN,
    anchoring: ctx.mode,
    durable: ctx.durable,

    resolve(path: string): Promise<FsTarget> {
      return guard(`cannot resolve "${path}"`, async () => {
        const key = await resolveKey(ctx, path);
        return { targetKey: FsTargetKey(key), displayPath: path };
      });
    },
    stat: async (target, { unversioned }) => (await ops()).stat(ctx, target, unversioned),
    read: async (target, { maxBytes, unversioned }) => (await ops()).read(ctx, target, maxBytes, unversioned),
    async swap(target, { expect, bytes, signal, durability }) {
      const { swapLocked } = await ops();
      const what = `cannot ${bytes === null ? 'remove' : 'write'} "${target.displayPath}"`;
      const deferred = durability === 'deferred';
      return guard(what, () =>
        withRedirects(ctx, target.targetKey, what, (key) => ctx.lock.run(key, () => swapLocked(ctx, key, expect, bytes, signal, what, deferred))),
      );
    },
    openRead: async (target, { start, unversioned, versionAtEnd, reuse }) => (await ops()).openRead(ctx, target, start ?? 0, unversioned, { atEnd: versionAtEnd === true, reuse: reuse === true }),
    async swapFrom(target, { expect, source, signal, durability, expectAtEnd }) {
      const { swapLocked } = await ops();
      const what = `cannot write "${target.displayPath}"`;
      const deferred = durability === 'deferred';
      return guard(what, () =>
        withRedirects(ctx, target.targetKey, what, (key) =>
          ctx.lock.run(key, () => swapLocked(ctx, key, expect, source, signal, what, deferred, expectAtEnd === true)),
        ),
      );
    },
    setExecutable: async (target, executable) => (await ops()).setExecutable(ctx, target, executable),
    symlink: async (target, linkText) => (await ops()).symlink(ctx, target, linkText),
    readlink: async (target) => (await ops()).readlink(ctx, target),
    removeLink: async (target) => (await ops()).removeLink(ctx, target),
    renameLink: async (from, to, { replace }) => (await ops()).renameLink(ctx, from, to, replace),
    flush: (directories, { signal }) => flush(ctx, directories, signal),
    mkdir: (target) => mkdir(ctx, target),
    rmdir: (target, { recursive }) => rmdir(ctx, target, recursive),
    rename: async (from, to, options) => (await ops()).rename(ctx, from, to, options),
    listDir: (target, { stats }) => listDir(ctx, target, stats),
    walk: (target, options) => walk(ctx, target, options),
    // Only where small files are read with pinned synchronous calls (see LocalContext.syncWalk).
    ...(ctx.syncWalk ? { searchReads: (targets: readonly FsTarget[], query: FsSearchReadQuery, opts: FsOpOptions) => searchReads(ctx, helpers, targets, query, opts) } : {}),
    journal: {
      begin: (record) => guard(`cannot journal the ${String(record?.kind)}`, () => beginJournal(ctx, record)),
      pending: () => guard('cannot look for unfinished operations', () => pendingJournals(ctx)),
    },
    sweepTemps: (sweep?: SweepOptions) => sweepTemps(ctx, sweep),
  };
}
