import { FsError } from '../seam/errors.js';
import type { FsTarget } from '../seam/model.js';
import { headAt, requireParent } from './tx.js';
import type { StoreTx } from './types.js';

export async function symlinkKey(tx: StoreTx, target: FsTarget, text: string): Promise<void> {
  const what = `cannot create the link "${target.displayPath}"`;
  await requireParent(tx, target.targetKey, what);
  if ((await headAt(tx, target.targetKey)) !== undefined) throw new FsError('FS_ALREADY_EXISTS', `${what}: something is already there`);
  await tx.put(target.targetKey, { kind: 'link', text });
}

export async function readlinkKey(tx: StoreTx, target: FsTarget, what = `cannot read the link "${target.displayPath}"`): Promise<string> {
  const head = await headAt(tx, target.targetKey);
  if (head === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (head.kind !== 'link') throw new FsError('FS_INVALID_ARGUMENT', `${what}: not a symbolic link`);
  return head.text;
}

export async function removeLinkKey(tx: StoreTx, target: FsTarget): Promise<void> {
  await readlinkKey(tx, target, `cannot remove the link "${target.displayPath}"`);
  await tx.delete(target.targetKey);
}

/** K2: the link itself moves, its text unchanged; a file or link at `to` may be replaced, never a directory. */
export async function renameLinkKey(tx: StoreTx, from: FsTarget, to: FsTarget, replace: boolean): Promise<void> {
  const what = `cannot move the link "${from.displayPath}" to "${to.displayPath}"`;
  const head = await headAt(tx, from.targetKey);
  if (head === undefined) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
  if (head.kind !== 'link') throw new FsError('FS_INVALID_ARGUMENT', `${what}: the source is not a symbolic link`);
  if (from.targetKey === to.targetKey) return;
  await requireParent(tx, to.targetKey, what);
  const there = await headAt(tx, to.targetKey);
  if (there !== undefined && !replace) throw new FsError('FS_ALREADY_EXISTS', `${what}: the destination exists`);
  if (there?.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the destination is a directory`);
  await tx.delete(from.targetKey);
  await tx.put(to.targetKey, { kind: 'link', text: head.text });
}
