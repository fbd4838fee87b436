/** The memory provider's links (K1): memfs symlinks, checked first so that each call is all or nothing. */
import { posix } from 'node:path';
import { FsError, type FsOpOptions, type FsTarget } from '../../seam/index.js';
import { follow, lstat, type MemoryContext } from './context.js';

export async function symlink(ctx: MemoryContext, target: FsTarget, linkText: string): Promise<void> {
  const what = `cannot create the link "${target.displayPath}"`;
  const parent = follow(ctx, posix.dirname(target.targetKey));
  if (!parent) throw new FsError('FS_NOT_FOUND', `${what}: the parent directory does not exist`);
  if (!parent.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: the parent is not a directory`);
  if (lstat(ctx, target.targetKey)) throw new FsError('FS_ALREADY_EXISTS', `${what}: something is already there`);
  ctx.vol.symlinkSync(linkText, target.targetKey);
}

export async function readlink(ctx: MemoryContext, target: FsTarget): Promise<string> {
  const what = `cannot read the link "${target.displayPath}"`;
  const st = lstat(ctx, target.targetKey);
  if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (!st.isSymbolicLink()) throw new FsError('FS_INVALID_ARGUMENT', `${what}: not a symbolic link`);
  return String(ctx.vol.readlinkSync(target.targetKey));
}

export async function removeLink(ctx: MemoryContext, target: FsTarget): Promise<void> {
  const what = `cannot remove the link "${target.displayPath}"`;
  const st = lstat(ctx, target.targetKey);
  if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (!st.isSymbolicLink()) throw new FsError('FS_INVALID_ARGUMENT', `${what}: not a symbolic link`);
  ctx.vol.unlinkSync(target.targetKey);
}

export async function renameLink(ctx: MemoryContext, from: FsTarget, to: FsTarget, { replace }: FsOpOptions & { readonly replace: boolean }): Promise<void> {
  const { vol } = ctx;
  const what = `cannot move the link "${from.displayPath}" to "${to.displayPath}"`;
  const st = lstat(ctx, from.targetKey);
  if (!st) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
  if (!st.isSymbolicLink()) throw new FsError('FS_INVALID_ARGUMENT', `${what}: the source is not a symbolic link`);
  if (from.targetKey === to.targetKey) return;
  const parent = follow(ctx, posix.dirname(to.targetKey));
  if (!parent) throw new FsError('FS_NOT_FOUND', `${what}: the destination's directory does not exist`);
  if (!parent.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: the destination's parent is not a directory`);
  const there = lstat(ctx, to.targetKey);
  if (there && !replace) throw new FsError('FS_ALREADY_EXISTS', `${what}: the destination exists`);
  if (there?.isDirectory()) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the destination is a directory`);
  // Made anew rather than renamed (memfs follows a looping link in a rename); synchronous, so
  // atomic for every other caller.
  const text = String(vol.readlinkSync(from.targetKey));
  if (there) vol.unlinkSync(to.targetKey);
  vol.unlinkSync(from.targetKey);
  vol.symlinkSync(text, to.targetKey);
}
