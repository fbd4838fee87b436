import type { BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import { FsError, toFsError } from '../../seam/errors.js';
import { releasing } from '../../seam/releasing.js';
import type { FsProviderReadStream, FsTarget, FsVersion } from '../../seam/types.js';
import { contentHasher, type ContentHasher } from '../../seam/version.js';
import type { LocalContext } from './context.js';
import { openParent } from './dirs.js';
import { guard, notFound } from './errors.js';
import { leafVersion, openLeaf, type Leaf } from './leaf.js';
import { withRedirects } from './resolve.js';
import { sameTuple } from './version-cache.js';

/** Bytes per chunk of a streamed read: large enough that the thread-pool round trip is noise. */
const STREAM_CHUNK = 1024 * 1024;

/**
 * openRead (V7): the file opened as `read` opens it (no link followed, the descriptor checked to
 * be a regular file), its version from the cache or a streaming hash, then its bytes a chunk at
 * a time. The file is never held in memory; a change under the stream is FS_CONFLICT. With
 * `atEnd` and no cached version, the bytes are hashed as they stream instead of in a pass of
 * their own, and the version (then cached) is known once they have all been read.
 */
export function openRead(
  ctx: LocalContext,
  target: FsTarget,
  start: number,
  unversioned: boolean | undefined,
  { atEnd = false, reuse = false }: { readonly atEnd?: boolean; readonly reuse?: boolean } = {},
): Promise<FsProviderReadStream> {
  const what = `cannot read "${target.displayPath}"`;
  if (!Number.isSafeInteger(start) || start < 0) return Promise.reject(new FsError('FS_INVALID_ARGUMENT', `${what}: start must be a non-negative integer`));
  return guard(what, () =>
    withRedirects(ctx, target.targetKey, what, async (key) => {
      if (key === ctx.root) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file (a directory)`);
      const anchor = await openParent(ctx, key);
      if (anchor === undefined) throw notFound(what);
      try {
        const leaf = await openLeaf(ctx, anchor, posix.basename(key), key, what);
        if (leaf === undefined) throw notFound(what);
        try {
          if (unversioned !== true && atEnd && start === 0 && ctx.cache.lookup(key, leaf.st) === undefined) return hashedAsRead(ctx, leaf, key, what, reuse);
          const version = unversioned === true ? undefined : await leafVersion(ctx, leaf, key, what);
          const st = unversioned === true ? leaf.st : await leaf.handle.stat({ bigint: true });
          if (version !== undefined && !sameTuple(st, leaf.st)) throw changed(what);
          return { size: Number(st.size), ...(version !== undefined ? { version } : {}), chunks: releasing(chunksOf(leaf.handle, st, start, what, reuse), () => leaf.handle.close()) };
        } catch (err) {
          await leaf.handle.close().catch(() => undefined);
          throw err;
        }
      } finally {
        await anchor.close();
      }
    }),
  );
}

/** The stream of a file whose version is found on the way: recorded in the cache once the bytes are read, unchanged, to the end. */
function hashedAsRead(ctx: LocalContext, leaf: Leaf, key: string, what: string, reuse: boolean): FsProviderReadStream {
  let version: FsVersion | undefined;
  const hasher = contentHasher();
  const seen = (digest: FsVersion) => {
    version = digest;
    ctx.cache.record(key, leaf.st, digest);
  };
  return {
    size: Number(leaf.st.size),
    versionRead: () => version,
    chunks: releasing(chunksOf(leaf.handle, leaf.st, 0, what, reuse, { hasher, seen }), () => leaf.handle.close()),
  };
}

const changed = (what: string) => new FsError('FS_CONFLICT', `${what}: the file changed while it was read; read it again`);

/**
 * The bytes from `start`; the descriptor is closed when the consumer ends or stops early. From
 * the second chunk on, the next is read while the consumer works on this one (one chunk ahead):
 * a scan of a large file no longer waits for each read in turn. With `reuse`, two buffers take
 * turns: the one handed out is filled again only after the consumer asked for the next chunk.
 * With `hashing`, the bytes are hashed too, and the digest given only when the file proved unchanged.
 */
async function* chunksOf(
  handle: FileHandle,
  st: BigIntStats,
  start: number,
  what: string,
  reuse: boolean,
  hashing?: { readonly hasher: ContentHasher; readonly seen: (version: FsVersion) => void },
): AsyncGenerator<Uint8Array> {
  const buffers = reuse ? [Buffer.allocUnsafe(STREAM_CHUNK), Buffer.allocUnsafe(STREAM_CHUNK)] : undefined;
  let turn = 0;
  const readAt = async (position: number): Promise<Uint8Array> => {
    const buf = buffers ? buffers[turn++ % 2]! : Buffer.allocUnsafe(STREAM_CHUNK);
    try {
      const { bytesRead } = await handle.read(buf, 0, STREAM_CHUNK, position);
      return new Uint8Array(buf.buffer, buf.byteOffset, bytesRead);
    } catch (err) {
      throw toFsError(err, what);
    }
  };
  let ahead: Promise<Uint8Array> | undefined;
  try {
    let position = start;
    for (let n = 0; ; n++) {
      const chunk = await (ahead ?? readAt(position));
      ahead = undefined;
      if (chunk.length === 0) break;
      position += chunk.length;
      // From the second chunk on: a caller done after the first (a window at the start) reads no more.
      if (n > 0) {
        ahead = readAt(position);
        // Settled below when the consumer stops first.
        ahead.catch(() => undefined);
      }
      hashing?.hasher.update(chunk);
      yield chunk;
    }
    // The bytes streamed are those of the version given only if the file did not change meanwhile.
    const after = await handle.stat({ bigint: true }).catch((err: unknown) => {
      throw toFsError(err, what);
    });
    if (!sameTuple(after, st)) throw changed(what);
    hashing?.seen(hashing.hasher.digest());
  } finally {
    // No read is left going on the descriptor being closed.
    await ahead?.catch(() => undefined);
    await handle.close().catch(() => undefined);
  }
}
