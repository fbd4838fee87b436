import { posix } from 'node:path';
import { isFsError, throwIfAborted, type FsOpOptions } from '../../seam/index.js';
import { lowerFile, lowerStat, pathTarget } from './core.js';
import { isLinkVersion } from './links.js';
import { linkDiff } from './link-review.js';
import { fileDiff, renameDiff } from './file-diff.js';
import type { ReviewContext } from './review-context.js';
import { changes } from './review-status.js';

export async function diff(ctx: ReviewContext, paths?: readonly string[], options: FsOpOptions & { readonly includeIgnored?: boolean } = {}): Promise<string> {
  const { lower, state, rootKey } = ctx;
  const signal = options.signal;
  let out = '';
  const lowerBytes = async (key: string) => {
    try {
      return (await lowerFile(lower, pathTarget(key), `cannot diff "${key}"`, signal))?.bytes;
    } catch (err) {
      if (!isFsError(err, 'FS_NOT_REGULAR_FILE')) throw err;
      return undefined;
    }
  };
  const lowerExecutable = async (key: string) => (await lowerStat(lower, pathTarget(key), signal))?.executable === true;
  for (const change of await changes(ctx, paths, options)) {
    throwIfAborted(signal, 'cannot diff the overlay');
    // Directories are not shown, as in git: their files are. Ignored changes are counted elsewhere.
    if (change.type === 'directory' || (change.ignored !== undefined && options.includeIgnored !== true)) continue;
    const entry = state.entries.get(change.path);
    if (!entry) continue;
    if (change.type === 'link' || isLinkVersion(entry.base)) {
      out += await linkDiff(ctx, displayName(rootKey, change.path), change.path, entry, signal);
      continue;
    }
    const after = entry.kind === 'file' ? entry.bytes : undefined;
    if (change.kind === 'renamed') {
      // A file the move replaced at the new name goes first, as its own removal.
      out += fileDiff(displayName(rootKey, change.path), await lowerBytes(change.path), undefined);
      const modes = { before: await lowerExecutable(change.from!), after: change.executable === true };
      out += renameDiff(displayName(rootKey, change.from!), displayName(rootKey, change.path), await lowerBytes(change.from!), after, modes);
      continue;
    }
    const before = await lowerBytes(change.path);
    const modes = { before: before !== undefined && (await lowerExecutable(change.path)), after: change.executable === true };
    out += fileDiff(displayName(rootKey, change.path), before, after, modes);
  }
  return out;
}

function displayName(rootKey: string, key: string): string {
  const rel = posix.relative(rootKey, key);
  // `..x` is a name inside the root; only `..` and `../…` lead out.
  return rel === '' || rel === '..' || rel.startsWith('../') ? key.replace(/^\/+/, '') : rel;
}
