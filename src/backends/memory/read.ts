/** The memory provider's lookups by path: `resolve`, `stat`, `read`, and the current file for a write. */
import {
  FsError,
  FsTargetKey,
  UNVERSIONED,
  contentVersion,
  isExecutableMode,
  resolveLinks,
  type FsCurrent,
  type FsProviderInfo,
  type FsProviderReadOptions,
  type FsProviderReadStream,
  type FsProviderStatOptions,
  type FsTarget,
} from '../../seam/index.js';
import { follow, readFile, type MemoryContext } from './context.js';
import { entryAt, isAbsent, lookup, type CoreNode } from './lookup.js';
import { versionOf } from './versions.js';

/**
 * The node of the regular file at `key` (of at most `maxBytes`), in one path walk. `absent` when
 * nothing is there; undefined when it does not plainly succeed (not a file, refused, too large,
 * looping): the caller then takes the stat-first path for its exact answer.
 */
function quickNode(ctx: MemoryContext, key: string, maxBytes: number): CoreNode | 'absent' | undefined {
  const found = lookup(ctx, key, true);
  if (!found.ok) return isAbsent(found) ? 'absent' : undefined;
  const node = found.value.getNode();
  // The read permission memfs's open checks, against the ids read once.
  if (!node.isFile() || node.getSize() > maxBytes || !node.canRead(ctx.uid, ctx.gid)) return undefined;
  return node;
}

/**
 * A node's content. Shared: the storage itself. The provider's writes put a new buffer in its
 * place (setBuffer, writeFile), so the bytes handed out stay as they were.
 */
function contentOf(node: CoreNode, shared: boolean): Uint8Array {
  const buf = shared && node.buf !== undefined && node.size !== undefined ? node.buf.subarray(0, node.size) : node.getBuffer();
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/**
 * The current file at `key`, or undefined; anything but a regular file is refused, and so is a
 * file over `maxBytes` (before its content is read).
 */
export function current(ctx: MemoryContext, key: string, what: string, maxBytes = Infinity): FsCurrent | undefined {
  const quick = quickNode(ctx, key, maxBytes);
  if (quick === 'absent') return undefined;
  if (quick !== undefined) {
    const bytes = contentOf(quick, false);
    return { bytes, version: versionOf(quick, bytes) };
  }
  const st = follow(ctx, key);
  if (!st) return undefined;
  if (!st.isFile()) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
  if (Number(st.size) > maxBytes) throw new FsError('FS_TOO_LARGE', `${what}: the existing file is ${st.size} bytes, over the ${maxBytes}-byte limit`);
  const bytes = readFile(ctx, key);
  return { bytes, version: contentVersion(bytes) };
}

export async function resolve(ctx: MemoryContext, path: string): Promise<FsTarget> {
  const key = quickKey(ctx, path) ?? (await resolveLinks(path, ctx.reader));
  return { targetKey: FsTargetKey(key), displayPath: path };
}

/**
 * The key of a path with no link on it (an existing entry, or one about to be created in an
 * existing directory): the path itself, known in one walk. Any link is followed by resolveLinks,
 * the seam's rules: memfs reads a link's `..` lexically, where a path walk follows the link first.
 */
function quickKey(ctx: MemoryContext, path: string): string | undefined {
  const at = entryAt(ctx, path);
  if (at === undefined) return undefined;
  if (at.child !== undefined && at.child.getNode().isSymlink?.() !== false) return undefined;
  return path;
}

export async function stat(ctx: MemoryContext, target: FsTarget, { unversioned }: FsProviderStatOptions): Promise<FsProviderInfo | undefined> {
  const st = follow(ctx, target.targetKey);
  if (!st) return undefined;
  const mtimeMs = Number(st.mtimeMs);
  if (st.isFile()) {
    const executable = isExecutableMode(st.mode);
    if (unversioned) return { type: 'file', size: Number(st.size), mtimeMs, executable };
    const node = quickNode(ctx, target.targetKey, Infinity);
    if (node !== undefined && node !== 'absent') {
      const bytes = contentOf(node, true);
      return { type: 'file', version: versionOf(node, bytes), size: bytes.byteLength, mtimeMs, executable };
    }
    const bytes = readFile(ctx, target.targetKey);
    return { type: 'file', version: contentVersion(bytes), size: bytes.byteLength, mtimeMs, executable };
  }
  return { type: st.isDirectory() ? 'directory' : 'other', mtimeMs };
}

export async function read(ctx: MemoryContext, target: FsTarget, { maxBytes, unversioned, shared }: FsProviderReadOptions): Promise<FsCurrent> {
  const quick = quickNode(ctx, target.targetKey, maxBytes);
  const what = `cannot read "${target.displayPath}"`;
  if (quick === 'absent') throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (quick !== undefined) {
    const bytes = contentOf(quick, shared === true);
    return { bytes, version: unversioned ? UNVERSIONED : versionOf(quick, bytes) };
  }
  const st = follow(ctx, target.targetKey);
  if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (!st.isFile()) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
  if (Number(st.size) > maxBytes) {
    throw new FsError('FS_TOO_LARGE', `${what}: ${st.size} bytes exceeds the ${maxBytes}-byte limit`);
  }
  const bytes = readFile(ctx, target.targetKey);
  return { bytes, version: unversioned ? UNVERSIONED : contentVersion(bytes) };
}

/** openRead (V7): the file is in memory already, so its bytes are handed out in slices. */
export async function openRead(ctx: MemoryContext, target: FsTarget, options: FsProviderReadOptions & { readonly start?: number }): Promise<FsProviderReadStream> {
  const { bytes, version } = await read(ctx, target, { ...options, maxBytes: Infinity });
  const start = options.start ?? 0;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (let at = start; at < bytes.byteLength; at += SLICE) yield bytes.subarray(at, Math.min(bytes.byteLength, at + SLICE));
  }
  return { size: bytes.byteLength, ...(options.unversioned ? {} : { version }), chunks: chunks() };
}

const SLICE = 1024 * 1024;
