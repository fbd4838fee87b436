/** The memory provider's directories: `mkdir` (and the parents a write creates), `rmdir`. */
import { posix } from 'node:path';
import { FsError, checkRmdir, type FsOpOptions, type FsTarget } from '../../seam/index.js';
import { follow, type MemoryContext } from './context.js';
import { lookup } from './lookup.js';

/** D1: the directory and its missing parents; a file in the way is FS_NOT_DIRECTORY. */
export function mkdirs(ctx: MemoryContext, key: string, what: string): void {
  // The common case, a file written into an existing directory, in one walk.
  const found = lookup(ctx, key, true);
  if (found.ok && found.value.getNode().isDirectory()) return;
  for (let dir = key; ; dir = posix.dirname(dir)) {
    const st = follow(ctx, dir);
    // Already there (a file written into an existing directory): nothing to make.
    if (st?.isDirectory() && dir === key) return;
    if (st?.isDirectory()) break;
    if (st) throw new FsError('FS_NOT_DIRECTORY', `${what}: "${dir}" is not a directory`);
    if (dir === '/') break;
  }
  ctx.vol.mkdirSync(key, { recursive: true });
}

export async function mkdir(ctx: MemoryContext, target: FsTarget): Promise<void> {
  mkdirs(ctx, target.targetKey, `cannot create directory "${target.displayPath}"`);
}

export async function rmdir(ctx: MemoryContext, target: FsTarget, { recursive }: FsOpOptions & { readonly recursive: boolean }): Promise<void> {
  const what = `cannot remove directory "${target.displayPath}"`;
  const st = follow(ctx, target.targetKey);
  if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (!st.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
  checkRmdir(what, ctx.vol.readdirSync(target.targetKey).length, recursive);
  ctx.vol.rmSync(target.targetKey, { recursive: true });
}
