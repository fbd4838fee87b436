import { FsError, isFsError, type FsCurrent, type FsProviderInfo, type FsProviderReadOptions, type FsProviderReadStream, type FsProviderStatOptions, type FsTarget } from '../../seam/index.js';
import { hasUpperDescendant, isHidden, notRegular, pathTarget } from './core.js';
import { resolveInView } from './links.js';
import { visibleLowerStat, type OverlayProviderContext } from './provider-context.js';

export async function stat(ctx: OverlayProviderContext, target: FsTarget, { signal, unversioned }: FsProviderStatOptions): Promise<FsProviderInfo | undefined> {
  const { state } = ctx;
  const key = target.targetKey;
  const entry = state.entries.get(key);
  if (entry?.kind === 'file') return { type: 'file', version: entry.version, size: entry.bytes.byteLength, mtimeMs: entry.mtimeMs, executable: entry.executable === true };
  if (entry?.kind === 'link') {
    // Named by itself (resolved with noFollow): what it leads to, as stat follows links (P4).
    const to = await resolveInView(ctx, key, signal).catch(() => undefined);
    return to === undefined || to === key ? undefined : ctx.stat(pathTarget(to), { signal, ...(unversioned ? { unversioned } : {}) });
  }
  // A directory's version is the seam's to mint, from the merged listing.
  if (state.dirs.has(key)) return { type: 'directory' };
  if (entry) return undefined;
  const info = await visibleLowerStat(ctx, target, signal, unversioned !== true);
  if (info?.type === 'directory') return { type: 'directory', ...(info.mtimeMs === undefined ? {} : { mtimeMs: info.mtimeMs }) };
  if (info === undefined && hasUpperDescendant(state, key)) return { type: 'directory' };
  return info;
}

export async function read(ctx: OverlayProviderContext, target: FsTarget, { maxBytes, signal, unversioned }: FsProviderReadOptions): Promise<FsCurrent> {
  const { lower, state } = ctx;
  const key = target.targetKey;
  const what = `cannot read "${target.displayPath}"`;
  const entry = state.entries.get(key);
  if (entry?.kind === 'file') {
    if (entry.bytes.byteLength > maxBytes) {
      throw new FsError('FS_TOO_LARGE', `${what}: ${entry.bytes.byteLength} bytes exceeds the ${maxBytes}-byte limit`);
    }
    // A copy: callers own what they read, and must not reach into the upper layer.
    return { bytes: new Uint8Array(entry.bytes), version: entry.version };
  }
  return fromLower(ctx, key, what, () => lower.readBytes(target, { maxBytes, signal, ...(unversioned === true ? { unversioned } : {}) }));
}

/**
 * A file the upper does not hold, read from the lower: what the upper says of the path first (a
 * directory, a removal, a hidden name), and a lower miss under upper children is a directory.
 */
async function fromLower<T>(ctx: OverlayProviderContext, key: string, what: string, readLower: () => Promise<T>): Promise<T> {
  const { state } = ctx;
  if (state.dirs.has(key)) throw notRegular(what);
  if (state.entries.get(key)) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (isHidden(state, key)) {
    if (hasUpperDescendant(state, key)) throw notRegular(what);
    throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  }
  try {
    return await readLower();
  } catch (err) {
    if (isFsError(err, 'FS_NOT_FOUND') && hasUpperDescendant(state, key)) throw notRegular(what);
    throw err;
  }
}

const SLICE = 1024 * 1024;

/**
 * openRead (V7): an upper file is handed out in slices of the copy the upper holds; a file the
 * view shows from the lower is streamed from the lower, so a large lower file stays there.
 */
export async function openRead(
  ctx: OverlayProviderContext,
  target: FsTarget,
  { signal, start = 0, unversioned }: FsProviderReadOptions & { readonly start?: number },
): Promise<FsProviderReadStream> {
  const { lower, state } = ctx;
  const key = target.targetKey;
  const what = `cannot read "${target.displayPath}"`;
  const entry = state.entries.get(key);
  if (entry?.kind === 'file') {
    const bytes = entry.bytes;
    async function* chunks(): AsyncGenerator<Uint8Array> {
      // Copies: callers own what they read, and must not reach into the upper layer.
      for (let at = start; at < bytes.byteLength; at += SLICE) yield bytes.slice(at, Math.min(bytes.byteLength, at + SLICE));
    }
    return { size: bytes.byteLength, version: entry.version, chunks: chunks() };
  }
  return fromLower(ctx, key, what, async () => {
    const stream = await lower.streamBytes(target, { start, ...(signal ? { signal } : {}), ...(unversioned ? { unversioned } : {}) });
    return { size: stream.size, ...(unversioned ? {} : { version: stream.version }), chunks: stream.chunks };
  });
}
