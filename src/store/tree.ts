import { posix } from 'node:path';
import { FsError } from '../seam/errors.js';
import type { FsTarget } from '../seam/model.js';
import type { FsProviderRename } from '../seam/provider.js';
import { checkRename, checkRmdir, type RenameSide } from '../seam/swap.js';
import { childrenOf, ensureDir, headAt, keysBelow } from './tx.js';
import type { StoreTx } from './types.js';

export async function mkdirKey(tx: StoreTx, target: FsTarget): Promise<void> {
  await ensureDir(tx, target.targetKey, `cannot create directory "${target.displayPath}"`);
}

export async function rmdirKey(tx: StoreTx, target: FsTarget, recursive: boolean): Promise<void> {
  const what = `cannot remove directory "${target.displayPath}"`;
  const dir = target.targetKey;
  const head = await headAt(tx, dir);
  if (head === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (head.kind !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
  checkRmdir(what, (await childrenOf(tx, dir)).length, recursive);
  const below = await keysBelow(tx, dir);
  for (const key of below.reverse()) await tx.delete(key);
  if (dir !== '/') await tx.delete(dir);
}

async function side(tx: StoreTx, key: string): Promise<RenameSide | undefined> {
  const head = await headAt(tx, key);
  switch (head?.kind) {
    case undefined:
      return undefined;
    case 'file':
      return { type: 'file', version: head.version };
    case 'directory':
      return { type: 'directory', empty: (await tx.list(key)).children.length === 0 };
    default:
      return { type: 'other' };
  }
}

/** D3 in one transaction: a directory moves with every entry below it. */
export async function renameKey(tx: StoreTx, from: FsTarget, to: FsTarget, options: FsProviderRename): Promise<void> {
  const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
  const src = from.targetKey;
  const dst = to.targetKey;
  const replacing = checkRename(what, await side(tx, src), await side(tx, dst), options);
  if (src === dst) return;
  if (replacing === 'none') await ensureDir(tx, posix.dirname(dst), what);
  else await tx.delete(dst);
  for (const key of [src, ...(await keysBelow(tx, src))]) {
    const entry = await tx.get(key);
    if (entry !== undefined) await tx.put(dst + key.slice(src.length), entry);
  }
  for (const key of [src, ...(await keysBelow(tx, src))].reverse()) await tx.delete(key);
}
