/** The memory provider's listings: `listDir`, and `walk` (D4) over them. */
import { posix } from 'node:path';
import {
  FsError,
  FsTargetKey,
  depthFirst,
  isExecutableMode,
  narrowing,
  resolveLinks,
  type FsDirEntry,
  type FsListOptions,
  type FsTarget,
  type FsWalkEntry,
  type FsWalkNarrowing,
  type FsWalkOptions,
} from '../../seam/index.js';
import { follow, lstat, realKey, type MemoryContext } from './context.js';
import { dirChildren } from './lookup.js';

/** The entries of a directory whose key is `canonical`ly its real path (then only links need resolving). */
async function children(
  ctx: MemoryContext,
  target: FsTarget,
  canonical: boolean,
  wantsStats?: (name: string) => boolean,
  narrow?: FsWalkNarrowing,
): Promise<FsDirEntry[]> {
  // Read from memfs's nodes where it can be: memfs's own readdir and lstat walk the path again per entry.
  const fast = canonical ? dirChildren(ctx, target.targetKey) : undefined;
  const dirents = fast?.map(({ name, stat }) => ({ name, isFile: () => stat.isFile(), isDirectory: () => stat.isDirectory(), stat })) ??
    (ctx.vol.readdirSync(target.targetKey, { withFileTypes: true }) as unknown as { name: string; isFile(): boolean; isDirectory(): boolean; stat?: undefined }[]);
  const entries: FsDirEntry[] = [];
  const narrowed = narrowing(narrow);
  for (const dirent of dirents) {
    const name = dirent.name;
    if (dirent.isFile() && narrowed.leavesOut(name)) continue;
    // One segment below a canonical key: plain concatenation is the join.
    const dirKey = target.targetKey;
    const lexical = dirKey === '/' ? `/${name}` : `${dirKey}/${name}`;
    const display = target.displayPath;
    const displayPath = display.startsWith('/') && !display.endsWith('/') ? `${display}/${name}` : posix.join(display, name);
    // Asked to spare stats: the listing's own type is enough for what is not a link.
    if (canonical && wantsStats && (dirent.isDirectory() || (dirent.isFile() && !wantsStats(name)))) {
      entries.push({ name, type: dirent.isFile() ? 'file' : 'directory', target: { targetKey: FsTargetKey(lexical), displayPath } });
      continue;
    }
    const own = canonical ? (dirent.stat ?? lstat(ctx, lexical)) : undefined;
    const plain = own !== undefined && !own.isSymbolicLink();
    // A looping link resolves to nothing: listed under its own name, never followed.
    const key = plain ? lexical : await resolveLinks(lexical, ctx.reader).catch(() => undefined);
    const child = plain ? own : key === undefined ? undefined : follow(ctx, key);
    // P4: a dangling or looping link is `other`.
    const type = !child ? 'other' : child.isFile() ? 'file' : child.isDirectory() ? 'directory' : 'other';
    entries.push({
      name,
      type,
      target: { targetKey: FsTargetKey(key ?? lexical), displayPath },
      ...(type === 'file' ? { size: Number(child!.size), executable: isExecutableMode(child!.mode) } : {}),
      ...(child ? { mtimeMs: Number(child.mtimeMs) } : {}),
    });
  }
  narrowed.report();
  return entries;
}

export async function listDir(ctx: MemoryContext, target: FsTarget, { stats }: FsListOptions): Promise<FsDirEntry[]> {
  const what = `cannot list "${target.displayPath}"`;
  const st = follow(ctx, target.targetKey);
  if (!st) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (!st.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
  // While the directory's key is still its real path, only a child that is a link needs resolving.
  // (realpath walks the path once; resolving it component by component made deep trees cubic.)
  const canonical = (realKey(ctx, target.targetKey) ?? (await resolveLinks(target.targetKey, ctx.reader))) === target.targetKey;
  return children(ctx, target, canonical, stats === false ? () => false : undefined);
}

/**
 * D4: one listing per real subdirectory; below the top, a real subdirectory's key is its real path.
 * `list` is the provider's own listDir, which lists the top.
 */
export function walk(
  ctx: MemoryContext,
  top: FsTarget,
  { signal, prune, onUnreadable, wantsStats, narrow }: FsWalkOptions,
  list: (dir: FsTarget, signal: AbortSignal | undefined) => Promise<FsDirEntry[]>,
): AsyncIterable<FsWalkEntry> {
  const walkHooks = { ...(prune ? { prune } : {}), ...(onUnreadable ? { onUnreadable } : {}) };
  const listing = (dir: FsTarget, isTop: boolean, prefix: string) => {
    if (isTop) return list(dir, signal);
    return children(ctx, dir, true, wantsStats && ((name: string) => wantsStats(prefix === '' ? name : `${prefix}/${name}`, name)), narrow);
  };
  return depthFirst(top, listing, walkHooks);
}
