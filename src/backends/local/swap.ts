import { constants, type BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import { FsError, throwIfAborted, toFsError } from '../../seam/errors.js';
import { expectHolds, observe } from '../../seam/swap.js';
import { FsVersion, type FsExpect, type FsObservation, type FsSwapResult } from '../../seam/types.js';
import { contentHasher, contentVersion } from '../../seam/version.js';
import { Moved, type DirAnchor } from './anchor.js';
import { O_NOFOLLOW, type LocalContext } from './context.js';
import { ensureDir, openParent, removeMade } from './dirs.js';
import { errnoOf, ignoreErrno, isAbsent } from './errors.js';
import { hashLeaf, leafVersion, openLeaf } from './leaf.js';
import { tempName } from './temps.js';
import { isRacilyClean, sameTuple } from './version-cache.js';

/** What link(2) answers on a filesystem without hard links: publish by rename instead. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);
const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW;

/** New content: whole, or a stream (swapFrom) written chunk by chunk and hashed as it goes. */
export type Content = Uint8Array | AsyncIterable<Uint8Array>;

/** A swap's expectation failed at publication: another writer got there after the check. */
class Mismatch extends Error {}

/** Atomic publication: temp in the same directory, exclusive, fsync, rename, fsync(dir). */
interface PublishOptions {
  readonly before: BigIntStats | undefined;
  /**
   * How to publish: `link` fails if a racing creator got there first; `link-or-rename` (an
   * unconditional write that saw no file) links, and renames over a file another process
   * created meanwhile, so "existed" is decided by the publishing call itself; `rename` replaces.
   */
  readonly mode: 'link' | 'link-or-rename' | 'rename';
  /** Re-check just before the rename that the target still holds this version. */
  readonly expect: FsVersion | undefined;
  /** The expected version was not checked before the write: compare it then, whatever the stat says. */
  readonly verify: boolean;
  readonly signal: AbortSignal | undefined;
  readonly what: string;
  readonly key: string;
  /** Leave the directory unflushed (F1: the caller flushes it once for many files). */
  readonly deferred: boolean;
}

/**
 * G7 under the provider's lock: compare, then publish or remove. The existing file is never
 * read into memory: its version comes from the cache or a streaming hash, and only when the
 * expectation names one.
 */
export async function swapLocked(
  ctx: LocalContext,
  key: string,
  expect: FsExpect,
  bytes: Content | null,
  signal: AbortSignal | undefined,
  what: string,
  deferred: boolean,
  expectAtEnd = false,
): Promise<FsSwapResult> {
  const { fsp, cache } = ctx;
  if (key === ctx.root) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the root is a directory`);
  throwIfAborted(signal, what);
  const name = posix.basename(key);
  // Missing parents are created only once there is something to publish: a refused write
  // leaves no directory behind.
  let anchor = await openParent(ctx, key);
  try {
    const leaf = anchor && (await openLeaf(ctx, anchor, name, key, what));
    let version: FsVersion | undefined;
    // A source made from the old file itself hashes it as it is read: rather than a pass of its
    // own, an expected version not already cached is checked at publication (by then cached).
    const later = expectAtEnd && leaf !== undefined && expect.kind === 'present' && !(bytes instanceof Uint8Array) && bytes !== null;
    try {
      if (later) version = cache.lookup(key, leaf.st);
      else if (leaf && expect.kind !== 'any') version = await leafVersion(ctx, leaf, key, what);
    } finally {
      await leaf?.handle.close().catch(() => undefined);
    }
    const before = leaf && version !== undefined ? { version } : leaf ? { version: FsVersion('unhashed') } : undefined;
    const verify = later && version === undefined;
    if (!verify && !expectHolds(expect, before)) return { ok: false, current: observe(before) };
    throwIfAborted(signal, what);
    if (bytes === null) {
      if (leaf && anchor) {
        await fsp.unlink(anchor.child(name));
        cache.delete(key);
        if (ctx.durable && !deferred) await anchor.handle.sync();
      }
      return { ok: true, existed: leaf !== undefined };
    }
    // Replacing by rename needs only a writable directory; honour the file's own permission too.
    if (leaf && anchor) await fsp.access(anchor.child(name), constants.W_OK);
    const made: string[] = [];
    let published: { st: BigIntStats | undefined; replaced: boolean; written: FsVersion };
    try {
      anchor ??= await ensureDir(ctx, posix.dirname(key), what, made);
      published = await publish(ctx, anchor, name, bytes, {
        before: leaf?.st,
        mode: expect.kind === 'absent' ? 'link' : leaf ? 'rename' : 'link-or-rename',
        expect: expect.kind === 'present' ? expect.version : undefined,
        verify,
        signal,
        what,
        key,
        deferred,
      });
    } catch (err) {
      // A failed write leaves no trace: drop the directories it made (rmdir refuses non-empty ones).
      await removeMade(ctx, made);
      if (!(err instanceof Mismatch) || anchor === undefined) throw err;
      return { ok: false, current: await observeNow(ctx, anchor, name, key, what) };
    }
    const { written } = published;
    if (published.st) cache.record(key, published.st, written);
    return { ok: true, existed: leaf !== undefined || published.replaced, version: written };
  } finally {
    await anchor?.close();
  }
}

/** Publishes `bytes` at `name`; `replaced` says whether the publishing step replaced a file. */
async function publish(
  ctx: LocalContext,
  anchor: DirAnchor,
  name: string,
  bytes: Content,
  o: PublishOptions,
): Promise<{ st: BigIntStats | undefined; replaced: boolean; written: FsVersion }> {
  const { fsp } = ctx;
  const { tmp, handle } = await createTemp(ctx, anchor, name, o.before);
  let tmpExists = true;
  let replaced = false;
  let written: FsVersion;
  try {
    written = await writeContent(handle, bytes, o);
    if (o.before) await keepOwnerAndMode(ctx, handle, o.before);
    if (ctx.durable) await handle.sync();
    if (o.expect !== undefined) await recheck(ctx, anchor, name, o, o.expect);
    throwIfAborted(o.signal, o.what);
    let linked = false;
    let present: boolean | undefined;
    if (o.mode !== 'rename') {
      try {
        await fsp.link(anchor.child(tmp), anchor.child(name));
        linked = true;
      } catch (err) {
        const code = errnoOf(err);
        if (code !== 'EEXIST' && !NO_HARD_LINKS.has(code ?? '')) throw err;
        // EEXIST: created meanwhile by someone else. Without hard links (a FUSE mount, FAT),
        // the check is ours, under the provider's lock, just before the rename.
        present = code === 'EEXIST' || (await entryExists(ctx, anchor.child(name)));
        if (present && o.mode === 'link') throw new Mismatch();
      }
    }
    if (!linked) {
      await fsp.rename(anchor.child(tmp), anchor.child(name));
      tmpExists = false;
      replaced = present ?? true;
    }
  } catch (err) {
    if (tmpExists) await fsp.unlink(anchor.child(tmp)).catch(() => undefined);
    await handle.close().catch(() => undefined);
    throw err;
  }
  // Published: the new bytes are what readers see, so from here nothing reports the write as
  // failed unless it really is in doubt. A link's temp name is housekeeping (sweepTemps finds
  // a leftover); a failed fstat only costs the version cache its entry.
  try {
    if (tmpExists) await unlinkTemp(ctx, anchor.child(tmp));
    const st = await handle.stat({ bigint: true }).catch(() => undefined);
    if (ctx.durable && !o.deferred) {
      try {
        await anchor.handle.sync();
      } catch (err) {
        throw toFsError(err, `${o.what}: the new content is in place, but its directory could not be flushed to disk, so it may not survive a crash`);
      }
    }
    return { st, replaced, written };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Writes the content to the temp file; the version of exactly what was written. */
async function writeContent(handle: FileHandle, content: Content, o: PublishOptions): Promise<FsVersion> {
  if (content instanceof Uint8Array) {
    await handle.writeFile(content);
    return contentVersion(content);
  }
  const hasher = contentHasher();
  let position = 0;
  for await (const chunk of content) {
    throwIfAborted(o.signal, o.what);
    hasher.update(chunk);
    for (let at = 0; at < chunk.byteLength; ) {
      const { bytesWritten } = await handle.write(chunk, at, chunk.byteLength - at, position);
      at += bytesWritten;
      position += bytesWritten;
    }
  }
  return hasher.digest();
}

/** A new temp file next to `name`, exclusive and no-follow: a name planted in advance (even a symlink) is never written through. */
async function createTemp(
  ctx: LocalContext,
  anchor: DirAnchor,
  name: string,
  before: BigIntStats | undefined,
): Promise<{ tmp: string; handle: FileHandle }> {
  for (let attempt = 0; ; attempt++) {
    const tmp = tempName(name);
    try {
      return { tmp, handle: await ctx.fsp.open(anchor.child(tmp), TEMP_FLAGS, before ? 0o600 : 0o666) };
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST' || attempt >= 3) throw err;
    }
  }
}

/** The replaced file's owner (when we may) and mode, onto its successor. */
async function keepOwnerAndMode(ctx: LocalContext, handle: FileHandle, before: BigIntStats): Promise<void> {
  const mine = await handle.stat({ bigint: true });
  if (ctx.isRoot && (mine.uid !== before.uid || mine.gid !== before.gid)) {
    await handle.chown(Number(before.uid), Number(before.gid)).catch(ignoreErrno('EPERM', 'EINVAL'));
  }
  // After chown, which clears set-id bits; the open mode was masked by the umask.
  await handle.chmod(Number(before.mode & 0o7777n));
}

async function entryExists(ctx: LocalContext, path: string): Promise<boolean> {
  try {
    await ctx.fsp.lstat(path);
    return true;
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return false;
    throw err;
  }
}

async function unlinkTemp(ctx: LocalContext, path: string): Promise<void> {
  // One retry: a transient failure should not leave a second name for the published file.
  await ctx.fsp.unlink(path).catch(() => ctx.fsp.unlink(path)).catch(() => undefined);
}

/**
 * Narrows the window in which a writer that does not take our lock (an editor, another
 * process) could change the file between the guard check and the rename.
 */
async function recheck(ctx: LocalContext, anchor: DirAnchor, name: string, o: PublishOptions, expect: FsVersion): Promise<void> {
  let now: BigIntStats | undefined;
  try {
    now = await ctx.fsp.lstat(anchor.child(name), { bigint: true });
  } catch (err) {
    if (!isAbsent(err)) throw err;
  }
  const stale = () => new Mismatch();
  if (now === undefined || o.before === undefined || !now.isFile()) throw stale();
  if (o.verify) {
    const cached = ctx.cache.lookup(o.key, now);
    if (cached !== undefined) {
      if (cached !== expect) throw stale();
      return;
    }
  } else if (sameTuple(now, o.before) && !isRacilyClean(now, ctx.clock(), ctx.racyWindowNs)) return;
  const leaf = await openLeaf(ctx, anchor, name, o.key, o.what).catch((err: unknown) => {
    if (err instanceof Moved) throw stale();
    throw err;
  });
  if (leaf === undefined) throw stale();
  try {
    // Replaced while hashed (Moved): not the version expected either.
    const { version } = await hashLeaf(leaf, o.what).catch((err: unknown) => {
      throw err instanceof Moved ? stale() : err;
    });
    if (version !== expect) throw stale();
  } finally {
    await leaf.handle.close().catch(() => undefined);
  }
}

const pathChanged = (what: string) => new FsError('FS_STALE_VERSION', `${what}: the path changed while it was being written`);

/** The file a writer outside our lock left at `name`, as a swap reports it. */
async function observeNow(ctx: LocalContext, anchor: DirAnchor, name: string, key: string, what: string): Promise<FsObservation> {
  const leaf = await openLeaf(ctx, anchor, name, key, what).catch((err: unknown) => {
    // Replaced by something that is not a file of ours to report: the caller re-resolves or fails.
    if (err instanceof Moved) throw pathChanged(what);
    throw err;
  });
  if (leaf === undefined) return { kind: 'absent' };
  try {
    const version = await leafVersion(ctx, leaf, key, what).catch((err: unknown) => {
      throw err instanceof Moved ? pathChanged(what) : err;
    });
    return { kind: 'present', version };
  } finally {
    await leaf.handle.close().catch(() => undefined);
  }
}
