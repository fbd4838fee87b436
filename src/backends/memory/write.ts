/** The memory provider's writes to files: `swap`, `modify`, `applyBatch` and `setExecutable`. */
import { posix } from 'node:path';
import {
  FsError,
  contentVersion,
  expectHolds,
  observe,
  withExecutable,
  type FsBatchResult,
  type FsBatchSwap,
  type FsCurrent,
  type FsModifyRequest,
  type FsSwapFromRequest,
  type FsSwapRequest,
  type FsSwapResult,
  type FsTarget,
  type FsVersion,
} from '../../seam/index.js';
import { applyMemoryBatch } from './batch.js';
import { follow, writeFile, type MemoryContext } from './context.js';
import { mkdirs } from './dirs.js';
import { createIn, entryAt, type CoreNode } from './lookup.js';
import { current } from './read.js';
import { keepVersion, versionOf } from './versions.js';

export async function swap(ctx: MemoryContext, target: FsTarget, { expect, bytes }: FsSwapRequest): Promise<FsSwapResult> {
  const { vol } = ctx;
  // Synchronous from the comparison to the publication, so atomic (G7).
  const key = target.targetKey;
  if (bytes !== null) {
    const at = entryAt(ctx, key);
    const node = at?.child?.getNode();
    if (node !== undefined && plainFile(ctx, node)) return swapNode(node, expect, bytes);
  }
  const before = current(ctx, key, `cannot write "${target.displayPath}"`);
  if (!expectHolds(expect, before)) return { ok: false, current: observe(before) };
  if (bytes === null) {
    if (before !== undefined) vol.unlinkSync(key);
    return { ok: true, existed: before !== undefined };
  }
  put(ctx, key, bytes, before !== undefined, `cannot write "${target.displayPath}"`);
  return { ok: true, existed: before !== undefined, version: contentVersion(bytes) };
}

/**
 * `bytes` as the content of `key`. A new file is made on memfs's nodes where that is plainly
 * possible, else through memfs with the directories it lacks (an existing file's directory exists).
 */
function put(ctx: MemoryContext, key: string, bytes: Uint8Array, existed: boolean, what: string, at = existed ? undefined : entryAt(ctx, key)): void {
  if (!existed) {
    if (at !== undefined && createIn(ctx, at, bytes)) return;
    mkdirs(ctx, posix.dirname(key), what);
  }
  writeFile(ctx, key, bytes);
}

/**
 * A read-modify-write in one synchronous step, so no other writer gets in between: one walk to
 * the file's directory where it plainly exists, its entry changed or created on memfs's nodes
 * (memfs's open asks the OS for the uid on every call); else a lookup of the current file and
 * memfs's own calls, which give the exact answer.
 */
export async function modify(
  ctx: MemoryContext,
  target: FsTarget,
  { maxBytes }: FsModifyRequest,
  change: (current: FsCurrent | undefined) => Uint8Array,
): Promise<FsSwapResult> {
  const key = target.targetKey;
  const at = entryAt(ctx, key);
  if (at?.child !== undefined) {
    const inPlace = modifyNode(ctx, at.child.getNode(), maxBytes, change);
    if (inPlace !== undefined) return inPlace;
  }
  const what = `cannot write "${target.displayPath}"`;
  // No entry in a directory that may be searched: a creation, as current would find.
  const before = at !== undefined && at.child === undefined ? undefined : current(ctx, key, what, maxBytes);
  const bytes = change(before);
  put(ctx, key, bytes, before !== undefined, what, at);
  return { ok: true, existed: before !== undefined, version: contentVersion(bytes) };
}

/**
 * A regular file on memfs's own nodes that memfs would plainly read and write (the ids read
 * once): then its content is changed on the node, as memfs's writeFileSync would leave it,
 * without memfs's open (which asks the OS for the uid on every call).
 */
function plainFile(ctx: MemoryContext, node: CoreNode): node is CoreNode & { setBuffer(buf: Uint8Array): void } {
  return node.setBuffer !== undefined && node.canWrite !== undefined && node.isFile() && node.canRead(ctx.uid, ctx.gid) && node.canWrite(ctx.uid, ctx.gid);
}

/**
 * The stored bytes themselves rather than memfs's copy: every write puts a new buffer in their
 * place (setBuffer), so bytes handed out never change afterwards.
 */
function storedBytes(node: CoreNode): Uint8Array {
  const old = node.buf !== undefined && node.size !== undefined ? node.buf.subarray(0, node.size) : node.getBuffer();
  return new Uint8Array(old.buffer, old.byteOffset, old.byteLength);
}

/** A swap of an existing plain file (see plainFile): its version is only computed when `expect` needs it. */
function swapNode(node: CoreNode & { setBuffer(buf: Uint8Array): void }, expect: FsSwapRequest['expect'], bytes: Uint8Array): FsSwapResult {
  if (expect.kind !== 'any') {
    const before = storedBytes(node);
    const now = { bytes: before, version: versionOf(node, before) };
    if (!expectHolds(expect, now)) return { ok: false, current: observe(now) };
  }
  // memfs keeps a copy of its own, as a write through a descriptor would.
  node.setBuffer(bytes);
  return { ok: true, existed: true, version: kept(node, bytes) };
}

/** An existing, readable and writable regular file changed on its node; undefined where it is not plainly so. */
function modifyNode(ctx: MemoryContext, node: CoreNode, maxBytes: number, change: (current: FsCurrent | undefined) => Uint8Array): FsSwapResult | undefined {
  if (!plainFile(ctx, node) || node.getSize() > maxBytes) return undefined;
  const before = storedBytes(node);
  const bytes = change({ bytes: before, version: versionOf(node, before) });
  node.setBuffer(bytes);
  return { ok: true, existed: true, version: kept(node, bytes) };
}

/** The version of `bytes`, just set as `node`'s content, kept for the next read of it. */
function kept(node: CoreNode, bytes: Uint8Array): FsVersion {
  const version = contentVersion(bytes);
  keepVersion(node, version);
  return version;
}

/** swapFrom (V7): memory holds the whole file anyway, so the stream is gathered, then swapped. */
export async function swapFrom(ctx: MemoryContext, target: FsTarget, { source, ...request }: FsSwapFromRequest): Promise<FsSwapResult> {
  const parts: Uint8Array[] = [];
  for await (const chunk of source) parts.push(chunk);
  return swap(ctx, target, { ...request, bytes: Buffer.concat(parts) });
}

export async function applyBatch(ctx: MemoryContext, swaps: readonly FsBatchSwap[]): Promise<FsBatchResult> {
  const store = {
    vol: ctx.vol,
    current: (key: string, what: string) => current(ctx, key, what),
    mkdirs: (key: string, what: string) => mkdirs(ctx, key, what),
  };
  return applyMemoryBatch(store, swaps);
}

export async function setExecutable(ctx: MemoryContext, target: FsTarget, executable: boolean): Promise<void> {
  const st = follow(ctx, target.targetKey);
  const what = `cannot change the mode of "${target.displayPath}"`;
  if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (!st.isFile()) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
  ctx.vol.chmodSync(target.targetKey, withExecutable(Number(st.mode) & 0o7777, executable));
}
