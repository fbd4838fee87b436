import { posix } from 'node:path';
import { FsError } from '../seam/errors.js';
import type { FsObservation, FsTarget } from '../seam/model.js';
import type { FsBatchResult, FsBatchSwap, FsCurrent, FsModifyRequest, FsSwapRequest, FsSwapResult } from '../seam/provider.js';
import { expectHolds, observe } from '../seam/swap.js';
import { contentVersion } from '../seam/version.js';
import { ensureDir, headAt } from './tx.js';
import type { StoreEntry, StoreHead, StoreTx } from './types.js';

type FileHead = Extract<StoreHead, { kind: 'file' }>;

/** The file at `key`, or undefined; anything else there cannot be replaced by a file. */
async function fileAt(tx: StoreTx, key: string, what: string): Promise<FileHead | undefined> {
  const head = await headAt(tx, key);
  if (head === undefined) return undefined;
  if (head.kind !== 'file') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: it is a ${head.kind === 'link' ? 'link' : 'directory'}, not a regular file`);
  return head;
}

/** Publishes `bytes` at `key` (its parents created), keeping the executable bit given. */
async function publish(tx: StoreTx, key: string, bytes: Uint8Array, executable: boolean | undefined, what: string) {
  await ensureDir(tx, posix.dirname(key), what);
  const version = contentVersion(bytes);
  const entry: StoreEntry = { kind: 'file', bytes: new Uint8Array(bytes), version, mtimeMs: Date.now(), ...(executable ? { executable: true } : {}) };
  await tx.put(key, entry);
  return version;
}

export async function swapKey(tx: StoreTx, target: FsTarget, { expect, bytes }: FsSwapRequest): Promise<FsSwapResult> {
  const what = `cannot write "${target.displayPath}"`;
  const before = await fileAt(tx, target.targetKey, what);
  if (!expectHolds(expect, before)) return { ok: false, current: observe(before) };
  if (bytes === null) {
    if (before !== undefined) await tx.delete(target.targetKey);
    return { ok: true, existed: before !== undefined };
  }
  const version = await publish(tx, target.targetKey, bytes, before?.executable, what);
  return { ok: true, existed: before !== undefined, version };
}

export async function modifyKey(
  tx: StoreTx,
  target: FsTarget,
  { maxBytes }: FsModifyRequest,
  change: (current: FsCurrent | undefined) => Uint8Array,
): Promise<FsSwapResult> {
  const what = `cannot write "${target.displayPath}"`;
  const before = await fileAt(tx, target.targetKey, what);
  if (before !== undefined && before.size > maxBytes) throw new FsError('FS_TOO_LARGE', `${what}: ${before.size} bytes exceeds the ${maxBytes}-byte limit`);
  const entry = before === undefined ? undefined : await tx.get(target.targetKey);
  const current = entry?.kind === 'file' ? { bytes: new Uint8Array(entry.bytes), version: entry.version } : undefined;
  const version = await publish(tx, target.targetKey, change(current), before?.executable, what);
  return { ok: true, existed: before !== undefined, version };
}

/** B1: every expectation checked first, then every change made, in the caller's transaction. */
export async function batchKeys(tx: StoreTx, swaps: readonly FsBatchSwap[]): Promise<FsBatchResult> {
  const found: (FileHead | undefined)[] = [];
  for (const [index, swap] of swaps.entries()) {
    const head = await fileAt(tx, swap.target.targetKey, `cannot write "${swap.target.displayPath}"`);
    if (!expectHolds(swap.expect, head)) return { ok: false, index, current: observe(head) as FsObservation };
    found.push(head);
  }
  const bits = new Map<string, boolean | undefined>();
  for (const [i, swap] of swaps.entries()) bits.set(swap.target.targetKey, found[i]?.executable);
  const versions = [];
  for (const swap of swaps) {
    const key = swap.target.targetKey;
    if (swap.bytes === null) {
      if ((await headAt(tx, key)) !== undefined) await tx.delete(key);
      versions.push(undefined);
      continue;
    }
    const executable = swap.from !== undefined ? bits.get(swap.from.targetKey) : bits.get(key);
    versions.push(await publish(tx, key, swap.bytes, executable, `cannot write "${swap.target.displayPath}"`));
  }
  return { ok: true, versions };
}

export async function setExecutableKey(tx: StoreTx, target: FsTarget, executable: boolean): Promise<void> {
  const what = `cannot change the mode of "${target.displayPath}"`;
  const entry = await tx.get(target.targetKey);
  if (entry === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (entry.kind !== 'file') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
  const { executable: _old, ...rest } = entry;
  await tx.put(target.targetKey, executable ? { ...rest, executable: true } : rest);
}
