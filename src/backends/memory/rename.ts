/** The memory provider's `rename` (D3): checked by the seam's rules, then one memfs rename. */
import { posix } from 'node:path';
import { checkRename, contentVersion, type FsProviderRename, type FsTarget, type RenameSide } from '../../seam/index.js';
import { follow, readFile, type MemoryContext } from './context.js';
import { mkdirs } from './dirs.js';

export async function rename(ctx: MemoryContext, from: FsTarget, to: FsTarget, options: FsProviderRename): Promise<void> {
  const { vol } = ctx;
  const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
  const side = (key: string): RenameSide | undefined => {
    const st = follow(ctx, key);
    if (!st) return undefined;
    if (st.isFile()) return { type: 'file', version: contentVersion(readFile(ctx, key)) };
    if (st.isDirectory()) return { type: 'directory', empty: vol.readdirSync(key).length === 0 };
    return { type: 'other' };
  };
  const replacing = checkRename(what, side(from.targetKey), side(to.targetKey), options);
  if (replacing === 'none') mkdirs(ctx, posix.dirname(to.targetKey), what);
  else if (replacing === 'directory') vol.rmdirSync(to.targetKey);
  else vol.unlinkSync(to.targetKey);
  vol.renameSync(from.targetKey, to.targetKey);
}
