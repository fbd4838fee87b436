import { FsTargetKey, type FsJournal, type FsOpOptions, type FsProvider, type FsSearchReadQuery, type FsTarget } from '../../seam/types.js';
import type { AnchorMode } from './anchor.js';
import { createContext, type LocalProviderOptions } from './context.js';
import { flush, mkdir, rmdir } from './dirs.js';
import { guard } from './errors.js';
import { beginJournal } from './journal.js';
import { pendingJournals } from './journal-recover.js';
import { readlink, removeLink, renameLink, symlink } from './links.js';
import { listDir } from './list.js';
import { setExecutable } from './modes.js';
import { read, stat } from './read.js';
import { rename } from './rename.js';
import { resolveKey, withRedirects } from './resolve.js';
import { checkSearchHelpers, searchReads } from './search-reads.js';
import { swapLocked } from './swap.js';
import { openRead } from './stream.js';
import { sweepTemps, TEMP_NAME_PATTERN, type SweepOptions } from './temps.js';
import { walk } from './walk.js';

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
  const helpers = checkSearchHelpers(options.searchThreads, options.searchHelpers);
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
    stat: (target, { unversioned }) => stat(ctx, target, unversioned),
    read: (target, { maxBytes, unversioned }) => read(ctx, target, maxBytes, unversioned),
    swap(target, { expect, bytes, signal, durability }) {
      const what = `cannot ${bytes === null ? 'remove' : 'write'} "${target.displayPath}"`;
      const deferred = durability === 'deferred';
      return guard(what, () =>
        withRedirects(ctx, target.targetKey, what, (key) => ctx.lock.run(key, () => swapLocked(ctx, key, expect, bytes, signal, what, deferred))),
      );
    },
    openRead: (target, { start, unversioned, versionAtEnd, reuse }) => openRead(ctx, target, start ?? 0, unversioned, { atEnd: versionAtEnd === true, reuse: reuse === true }),
    swapFrom(target, { expect, source, signal, durability, expectAtEnd }) {
      const what = `cannot write "${target.displayPath}"`;
      const deferred = durability === 'deferred';
      return guard(what, () =>
        withRedirects(ctx, target.targetKey, what, (key) =>
          ctx.lock.run(key, () => swapLocked(ctx, key, expect, source, signal, what, deferred, expectAtEnd === true)),
        ),
      );
    },
    setExecutable: (target, executable) => setExecutable(ctx, target, executable),
    symlink: (target, linkText) => symlink(ctx, target, linkText),
    readlink: (target) => readlink(ctx, target),
    removeLink: (target) => removeLink(ctx, target),
    renameLink: (from, to, { replace }) => renameLink(ctx, from, to, replace),
    flush: (directories, { signal }) => flush(ctx, directories, signal),
    mkdir: (target) => mkdir(ctx, target),
    rmdir: (target, { recursive }) => rmdir(ctx, target, recursive),
    rename: (from, to, options) => rename(ctx, from, to, options),
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
