import type { BigIntStats } from 'node:fs';
import { posix } from 'node:path';
import { FsError, throwIfAborted, toFsError } from '../../seam/errors.js';
import { checkNotRoot, checkRmdir } from '../../seam/swap.js';
import { forEachBounded } from '../../seam/settle.js';
import type { FsProviderInfo, FsTarget } from '../../seam/types.js';
import { Moved, type DirAnchor } from './anchor.js';
import type { LocalContext } from './context.js';
import { dirOpenError, errnoOf, guard, isAbsent, notFound } from './errors.js';
import { withRedirects } from './resolve.js';
import { isTempName } from './temps.js';

/** Directories fsynced at once by flush. */
const FLUSH_CONCURRENCY = 8;

/** Informational only (search orders by it); versions never look at timestamps. */
export function msOf(st: BigIntStats): number {
  return Number(st.mtimeNs / 1_000_000n);
}

/** The anchored parent directory of `key`, or undefined when it does not exist. */
export async function openParent(ctx: LocalContext, key: string): Promise<DirAnchor | undefined> {
  try {
    return await ctx.openDir(posix.dirname(key));
  } catch (err) {
    if (isAbsent(err)) return undefined;
    throw err;
  }
}

/** Opens (creating what is missing, inside the root, anchored) the directory `dir`. */
export async function ensureDir(ctx: LocalContext, dir: string, what: string, made: string[] = []): Promise<DirAnchor> {
  const { fsp } = ctx;
  try {
    return await ctx.openDir(dir);
  } catch (err) {
    if (errnoOf(err) === 'ENOTDIR') throw new FsError('FS_NOT_DIRECTORY', `${what}: a parent of the path is not a directory`);
    if (errnoOf(err) !== 'ENOENT' || dir === ctx.root) throw err;
  }
  const parent = await ensureDir(ctx, posix.dirname(dir), what, made);
  const name = posix.basename(dir);
  try {
    await fsp.mkdir(parent.child(name));
    made.push(dir);
  } catch (err) {
    if (errnoOf(err) !== 'EEXIST') {
      await parent.close();
      throw err;
    }
    const st = await fsp.lstat(parent.child(name)).finally(() => parent.close());
    // A link planted after the path was resolved: resolve again rather than follow it blindly.
    if (st.isSymbolicLink()) throw new Moved(dir);
    if (!st.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: a parent of the path is not a directory`);
    return ctx.openDir(dir);
  }
  await parent.close();
  return ctx.openDir(dir);
}

/** Runs `fn` in the anchored parent directory of `key` (FS_NOT_FOUND when there is none). */
export async function inParent<T>(
  ctx: LocalContext,
  key: string,
  what: string,
  fn: (anchor: DirAnchor, name: string) => Promise<T>,
): Promise<T> {
  checkNotRoot(what, ctx.root, key);
  const anchor = await openParent(ctx, key);
  if (anchor === undefined) throw notFound(what);
  try {
    return await fn(anchor, posix.basename(key));
  } finally {
    await anchor.close();
  }
}

/** Removes the directories a failed operation made, deepest first. */
export async function removeMade(ctx: LocalContext, made: readonly string[]): Promise<void> {
  for (const dir of [...made].reverse()) {
    try {
      const parent = await ctx.openDir(posix.dirname(dir));
      try {
        await ctx.fsp.rmdir(parent.child(posix.basename(dir)));
      } finally {
        await parent.close();
      }
    } catch {
      return; // best effort: something else now lives there, or the disk is failing
    }
  }
}

/** Removes a directory tree through anchored descriptors only: a subdirectory swapped for a link is never followed. */
async function removeTree(ctx: LocalContext, anchor: DirAnchor, what: string): Promise<void> {
  const { fsp } = ctx;
  for (const entry of await fsp.readdir(anchor.self, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      const child = await ctx.openDir(posix.join(anchor.path, entry.name));
      try {
        await removeTree(ctx, child, what);
      } finally {
        await child.close();
      }
      await fsp.rmdir(anchor.child(entry.name));
    } else {
      await fsp.unlink(anchor.child(entry.name));
    }
  }
}

/** The names of a directory, without our temp files. */
export async function listNames(ctx: LocalContext, anchor: DirAnchor): Promise<string[]> {
  const names = await ctx.fsp.readdir(anchor.self);
  return names.filter((n) => !isTempName(n));
}

/** A directory's info; opened through its anchor, so one outside the root is refused. */
export async function dirInfo(ctx: LocalContext, key: string): Promise<FsProviderInfo> {
  const anchor = await ctx.openDir(key);
  try {
    const st = await anchor.handle.stat({ bigint: true });
    return { type: 'directory', mtimeMs: msOf(st) };
  } finally {
    await anchor.close();
  }
}

export function mkdir(ctx: LocalContext, target: FsTarget): Promise<void> {
  const what = `cannot create directory "${target.displayPath}"`;
  return guard(what, () =>
    withRedirects(ctx, target.targetKey, what, async (key) => {
      const made: string[] = [];
      const anchor = await ensureDir(ctx, key, what, made);
      try {
        if (ctx.durable && made.length > 0) {
          const parent = await ctx.openDir(posix.dirname(made[made.length - 1]!));
          await parent.handle.sync().finally(() => parent.close());
        }
      } finally {
        await anchor.close();
      }
    }),
  );
}

export function rmdir(ctx: LocalContext, target: FsTarget, recursive: boolean): Promise<void> {
  const what = `cannot remove directory "${target.displayPath}"`;
  return guard(what, () =>
    withRedirects(ctx, target.targetKey, what, async (key) => {
      checkNotRoot(what, ctx.root, key);
      let dir: DirAnchor;
      try {
        dir = await ctx.openDir(key);
      } catch (err) {
        throw dirOpenError(err, what);
      }
      let parent: DirAnchor | undefined;
      try {
        parent = await openParent(ctx, key);
        checkRmdir(what, (await ctx.fsp.readdir(dir.self)).length, recursive);
        if (recursive) await removeTree(ctx, dir, what);
        if (parent === undefined) throw notFound(what);
        // rmdir never follows a link: a directory swapped for one is refused, not emptied.
        await ctx.fsp.rmdir(parent.child(posix.basename(key)));
        if (ctx.durable) await parent.handle.sync();
      } finally {
        await dir.close();
        await parent?.close();
      }
    }),
  );
}

/** fsyncs each directory named (F1: once for many deferred writes). */
export function flush(ctx: LocalContext, directories: readonly FsTarget[], signal: AbortSignal | undefined): Promise<void> {
  return guard('cannot flush to disk', async () => {
    if (!ctx.durable) return;
    const keys = [...new Set(directories.map((d) => d.targetKey as string))];
    // Concurrently, a few at a time: each is one fsync of a directory.
    await forEachBounded(keys, FLUSH_CONCURRENCY, async (key) => {
      throwIfAborted(signal, 'cannot flush to disk');
      let anchor: DirAnchor;
      try {
        anchor = await ctx.openDir(key);
      } catch (err) {
        // Gone (or never made): nothing published there to flush.
        if (isAbsent(err) || errnoOf(err) === 'ENOTDIR' || err instanceof Moved) return;
        throw err;
      }
      try {
        await anchor.handle.sync();
      } catch (err) {
        throw toFsError(err, `cannot flush "${key}" to disk: what was written there may not survive a crash`);
      } finally {
        await anchor.close();
      }
    });
  });
}
