import { lstatSync, type BigIntStats } from 'node:fs';
import { posix } from 'node:path';
import { FsError } from '../../seam/errors.js';
import { isExecutableMode } from '../../seam/modes.js';
import { UNVERSIONED, type FsCurrent, type FsProviderInfo, type FsTarget } from '../../seam/types.js';
import { Moved } from './anchor.js';
import { withHeldDir } from './held-dir.js';
import type { LocalContext } from './context.js';
import { dirInfo, msOf, openParent } from './dirs.js';
import { guard, isAbsent, notFound } from './errors.js';
import { hashLeaf, openLeaf, readLeaf, readSmallSync } from './leaf.js';
import { withRedirects } from './resolve.js';

export function stat(ctx: LocalContext, target: FsTarget, unversioned: boolean | undefined): Promise<FsProviderInfo | undefined> {
  const { fsp, cache } = ctx;
  const what = `cannot stat "${target.displayPath}"`;
  return guard(what, () =>
    withRedirects(ctx, target.targetKey, what, async (key) => {
      if (key === ctx.root) return dirInfo(ctx, key);
      if (ctx.syncWalk) {
        const quick = statSync(ctx, key);
        if (quick === undefined) return undefined;
        if (quick !== null) {
          if (unversioned === true || quick.info.type !== 'file') return quick.info;
          // A version known for this very stat answers too; one to compute takes the general way.
          const cached = cache.lookup(key, quick.st);
          if (cached !== undefined) return { ...quick.info, version: cached };
        }
      }
      const anchor = await openParent(ctx, key);
      if (anchor === undefined) return undefined;
      try {
        const name = posix.basename(key);
        let st: BigIntStats;
        try {
          st = await fsp.lstat(anchor.child(name), { bigint: true });
        } catch (err) {
          if (isAbsent(err)) return undefined;
          throw err;
        }
        if (st.isSymbolicLink()) throw new Moved(key);
        if (st.isDirectory()) return await dirInfo(ctx, key);
        if (!st.isFile()) return { type: 'other' };
        if (unversioned === true) return { type: 'file', size: Number(st.size), mtimeMs: msOf(st), executable: isExecutableMode(st.mode) };
        const cached = cache.lookup(key, st);
        if (cached !== undefined) return { type: 'file', version: cached, size: Number(st.size), mtimeMs: msOf(st), executable: isExecutableMode(st.mode) };
        const leaf = await openLeaf(ctx, anchor, name, key, what);
        if (leaf === undefined) return undefined;
        try {
          const { version, st: after } = await hashLeaf(leaf, what);
          cache.record(key, after, version);
          return { type: 'file', version, size: Number(after.size), mtimeMs: msOf(after), executable: isExecutableMode(after.mode) };
        } finally {
          await leaf.handle.close().catch(() => undefined);
        }
      } finally {
        await anchor.close();
      }
    }),
  );
}

export function read(ctx: LocalContext, target: FsTarget, maxBytes: number, unversioned: boolean | undefined): Promise<FsCurrent> {
  const what = `cannot read "${target.displayPath}"`;
  return guard(what, () =>
    withRedirects(ctx, target.targetKey, what, async (key) => {
      if (key === ctx.root) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file (a directory)`);
      if (unversioned === true && ctx.syncWalk) {
        const quick = readSmallSync(ctx, key, maxBytes, what);
        if (quick !== undefined) return { bytes: quick, version: UNVERSIONED };
      }
      const anchor = await openParent(ctx, key);
      if (anchor === undefined) throw notFound(what);
      try {
        const leaf = await openLeaf(ctx, anchor, posix.basename(key), key, what);
        if (leaf === undefined) throw notFound(what);
        try {
          // Search reads without a digest: nothing to record then.
          const { bytes, version, st } = await readLeaf(leaf, maxBytes, what, unversioned !== true);
          if (unversioned !== true) ctx.cache.record(key, st, version);
          return { bytes, version };
        } finally {
          await leaf.handle.close().catch(() => undefined);
        }
      } finally {
        await anchor.close();
      }
    }),
  );
}

/**
 * A stat of a file or special file with synchronous calls, in the parent held as search's small
 * reads hold it (checked on every use), without a version; null for a directory, which takes the
 * general way.
 */
function statSync(ctx: LocalContext, key: string): { readonly info: FsProviderInfo; readonly st: BigIntStats } | undefined | null {
  try {
    return withHeldDir(ctx, posix.dirname(key), (parent) => {
      // Not found is an answer here, not an error to build (a create asks it of every new name).
      const st = lstatSync(parent.child(posix.basename(key)), { bigint: true, throwIfNoEntry: false });
      if (st === undefined) return undefined;
      if (st.isSymbolicLink()) throw new Moved(key);
      if (st.isDirectory()) return null;
      if (!st.isFile()) return { info: { type: 'other' }, st };
      return { info: { type: 'file', size: Number(st.size), mtimeMs: msOf(st), executable: isExecutableMode(st.mode) }, st };
    });
  } catch (err) {
    if (isAbsent(err)) return undefined;
    throw err;
  }
}
