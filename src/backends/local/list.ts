import { readdirSync, type BigIntStats } from 'node:fs';
import { posix } from 'node:path';
import { FsError } from '../../seam/errors.js';
import { isExecutableMode } from '../../seam/modes.js';
import { FsTargetKey, type FsDirEntry, type FsTarget } from '../../seam/types.js';
import { openDirSync, type DirAnchor } from './anchor.js';
import type { LocalContext } from './context.js';
import { dirOpenError, guard, isAbsent } from './errors.js';
import { listNames, msOf, openParent } from './dirs.js';
import { resolveKey, withRedirects } from './resolve.js';
import { isTempName } from './temps.js';

/** listDir entries between two turns of the event loop. */
const LIST_YIELD_EVERY = 256;
/** Reads of a directory whose names keep vanishing before the last is taken as it is. */
const RELIST_ATTEMPTS = 4;

export function listDir(ctx: LocalContext, target: FsTarget, stats: boolean | undefined): Promise<FsDirEntry[]> {
  const what = `cannot list "${target.displayPath}"`;
  return guard(what, () =>
    withRedirects(ctx, target.targetKey, what, async (key) => {
      let anchor: Pick<DirAnchor, 'child' | 'self'> & { close(): void | Promise<void> };
      try {
        // Synchronous where walks are: each async call is a thread-pool round trip.
        anchor = ctx.syncWalk ? openDirSync(key, ctx.root) : await ctx.openDir(key);
      } catch (err) {
        throw dirOpenError(err, what);
      }
      try {
        if (stats === false) return await listTyped(ctx, anchor, key, target.displayPath);
        // A name that vanished between the read of the directory and its lstat was renamed or
        // removed meanwhile: the directory is read again, so a rename shows one name, not none.
        for (let attempt = 1; ; attempt++) {
          const entries: FsDirEntry[] = [];
          const names = ctx.syncWalk ? readdirSync(anchor.self).filter((n) => !isTempName(n)) : await listNames(ctx, anchor as DirAnchor);
          let vanished = false;
          for (let i = 0; i < names.length; i++) {
            // Synchronous lstats would otherwise hold the event loop for a whole large directory.
            if (i > 0 && i % LIST_YIELD_EVERY === 0) await new Promise((done) => setImmediate(done));
            const entry = await describeEntry(ctx, anchor, key, names[i]!, target.displayPath);
            if (entry !== undefined) entries.push(entry);
            else vanished = true;
          }
          if (!vanished || attempt >= RELIST_ATTEMPTS) return entries;
        }
      } finally {
        await anchor.close();
      }
    }),
  );
}

/** A listing without stats: the listing's own types; only links need a look (where they lead). */
async function listTyped(ctx: LocalContext, anchor: Pick<DirAnchor, 'child' | 'self'>, key: string, displayDir: string): Promise<FsDirEntry[]> {
  const entries: FsDirEntry[] = [];
  const all = ctx.syncWalk ? readdirSync(anchor.self, { withFileTypes: true }) : await ctx.fsp.readdir(anchor.self, { withFileTypes: true });
  const dirents = all.filter((d) => !isTempName(d.name));
  for (const d of dirents) {
    if (d.isFile() || d.isDirectory()) {
      entries.push({ name: d.name, type: d.isFile() ? 'file' : 'directory', target: childTarget(key, displayDir, d.name) });
      continue;
    }
    const entry = await describeEntry(ctx, anchor, key, d.name, displayDir);
    if (entry !== undefined) entries.push(entry);
  }
  return entries;
}

/** The listing entry of `name` in a listed directory, a link described by where it leads. */
export async function describeEntry(
  ctx: LocalContext,
  anchor: Pick<DirAnchor, 'child'>,
  dirKey: string,
  name: string,
  displayDir: string,
): Promise<FsDirEntry | undefined> {
  const { fsp, root } = ctx;
  const displayPath = posix.join(displayDir, name);
  const lexical = posix.join(dirKey, name);
  let st: BigIntStats;
  try {
    st = ctx.entryLstat ? ctx.entryLstat(anchor.child(name)) : await fsp.lstat(anchor.child(name), { bigint: true });
  } catch (err) {
    if (isAbsent(err)) return undefined;
    throw err;
  }
  if (!st.isSymbolicLink()) return entryOf(name, lexical, displayPath, st);
  let key: string;
  try {
    key = await resolveKey(ctx, lexical);
  } catch (err) {
    // A link that leaves the root (or loops) is listed, never followed.
    if (err instanceof FsError) return { name, type: 'other', target: { targetKey: FsTargetKey(lexical), displayPath } };
    throw err;
  }
  let target: BigIntStats | undefined;
  if (key === root) target = await fsp.lstat(root, { bigint: true });
  else {
    // A link into a missing directory has no parent to open: it dangles, listed as `other`.
    const parent = await openParent(ctx, key).catch(() => undefined);
    try {
      target = parent && (await fsp.lstat(parent.child(posix.basename(key)), { bigint: true }).catch(() => undefined));
    } finally {
      await parent?.close();
    }
  }
  if (target === undefined || target.isSymbolicLink()) return { name, type: 'other', target: { targetKey: FsTargetKey(key), displayPath } };
  return entryOf(name, key, displayPath, target);
}

function entryOf(name: string, key: string, displayPath: string, st: BigIntStats): FsDirEntry {
  const type = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other';
  return {
    name,
    type,
    target: { targetKey: FsTargetKey(key), displayPath },
    ...(type === 'file' ? { size: Number(st.size), executable: isExecutableMode(st.mode) } : {}),
    mtimeMs: msOf(st),
  };
}

/** The target of the entry `name` of a listed directory (no path walk: `name` is one segment). */
export function childTarget(dirKey: string, displayDir: string, name: string): FsTarget {
  const targetKey = FsTargetKey(dirKey === '/' ? `/${name}` : `${dirKey}/${name}`);
  const displayPath = displayDir.startsWith('/') ? (displayDir === '/' ? `/${name}` : `${displayDir}/${name}`) : posix.join(displayDir, name);
  return { targetKey, displayPath };
}
