import { constants } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { posix } from 'node:path';
import { FsError } from '../../seam/errors.js';
import type { FsJournalBegin, FsJournalHandle } from '../../seam/journal.js';
import { compareNames } from '../../seam/resolve.js';
import { forEachBounded } from '../../seam/settle.js';
import type { DirAnchor } from './anchor.js';
import type { LocalContext } from './context.js';
import { openParent } from './dirs.js';
import { errnoOf, guard, ignoreErrno, isAbsent } from './errors.js';

// J1 on local disk. Before an operation's first write, a directory at the root (a reserved name,
// so never a user's file and never listed) receives a hard link to every file the operation may
// replace or remove (its old content, kept whatever the operation renames over it), and a record
// of what every path held. Killed part-way, the next opener runs it again (its owner) or puts every
// path back from the record (anyone else), then removes the directory and the operation's temps.

/** `.dsh-journal.<32 hex digits>.dsh-tmp`: one of the provider's temp names (TEMP_NAME_PATTERN). */
export const JOURNAL_DIR_PATTERN = /^\.dsh-journal\.[0-9a-f]{32}\.dsh-tmp$/;
export const RECORD_NAME = 'journal.json';
/** A process that took over an unfinished journal leaves `claimed.<pid>` in its directory. */
export const CLAIM_PREFIX = 'claimed.';

/** What a path held before the operation: a file (kept as `copy`), a link, a directory, nothing. */
export interface JournalEntry {
  readonly key: string;
  readonly was: 'file' | 'link' | 'dir' | 'absent' | 'other';
  /** The name, in the journal's directory, of the old file's link (or copy). */
  readonly copy?: string;
  readonly linkText?: string;
}

export interface JournalRecord {
  readonly version: 1;
  readonly kind: string;
  readonly owner?: string;
  readonly payload?: unknown;
  readonly pid: number;
  readonly host: string;
  readonly entries: readonly JournalEntry[];
}

/** Journal directories of operations under way in this process: never taken for a dead one's. */
export const activeJournals = new Set<string>();

const RECORD_CONCURRENCY = 8;

export function journalName(): string {
  return `.dsh-journal.${randomBytes(16).toString('hex')}.dsh-tmp`;
}

export async function beginJournal(ctx: LocalContext, begin: FsJournalBegin): Promise<FsJournalHandle> {
  const { fsp } = ctx;
  checkBegin(begin);
  const name = journalName();
  activeJournals.add(name);
  try {
    const root = await ctx.openDir(ctx.root);
    try {
      await fsp.mkdir(root.child(name), { mode: 0o700 });
      const dir = await ctx.openDir(posix.join(ctx.root, name));
      try {
        const entries = await recordKeys(ctx, dir, keysWithParents(ctx, begin.keys));
        const record: JournalRecord = {
          version: 1,
          kind: begin.kind,
          ...(begin.owner === undefined ? {} : { owner: begin.owner }),
          ...(begin.payload === undefined ? {} : { payload: begin.payload }),
          pid: process.pid,
          host: hostname(),
          entries,
        };
        await writeDurably(ctx, dir, RECORD_NAME, JSON.stringify(record));
        // The directory's entry too: a record that vanished with it would leave nothing to recover.
        if (ctx.durable) await root.handle.sync();
      } finally {
        await dir.close();
      }
    } finally {
      await root.close();
    }
  } catch (err) {
    await removeJournalRetrying(ctx, name).catch(() => undefined);
    activeJournals.delete(name);
    throw err;
  }
  let ended = false;
  return {
    async end() {
      if (ended) return;
      ended = true;
      try {
        await guard(`cannot end the journal of the ${begin.kind}`, () => removeJournalRetrying(ctx, name));
      } finally {
        activeJournals.delete(name);
      }
    },
  };
}

function checkBegin(begin: FsJournalBegin): void {
  if (typeof begin?.kind !== 'string' || begin.kind === '') throw new FsError('FS_INVALID_ARGUMENT', 'a journal needs a kind');
  if (!Array.isArray(begin.keys)) throw new FsError('FS_INVALID_ARGUMENT', 'a journal needs the keys it may change');
  if (begin.owner !== undefined && typeof begin.owner !== 'string') throw new FsError('FS_INVALID_ARGUMENT', 'a journal owner must be a string');
}

/** The keys, and every missing parent a write may make (recorded as absent, so undone too); sorted. */
function keysWithParents(ctx: LocalContext, keys: readonly string[]): string[] {
  const all = new Set<string>();
  for (const key of keys) {
    if (typeof key !== 'string' || !key.startsWith(`${ctx.root}/`)) continue;
    for (let k = key; k !== ctx.root && k.length > ctx.root.length && !all.has(k); k = posix.dirname(k)) all.add(k);
  }
  return [...all].sort(compareNames);
}

async function recordKeys(ctx: LocalContext, dir: DirAnchor, keys: readonly string[]): Promise<JournalEntry[]> {
  const entries: JournalEntry[] = new Array(keys.length);
  await forEachBounded(keys, RECORD_CONCURRENCY, async (key, i) => {
    entries[i] = await recordKey(ctx, dir, key, String(i));
  });
  return entries;
}

async function recordKey(ctx: LocalContext, dir: DirAnchor, key: string, copy: string): Promise<JournalEntry> {
  const { fsp } = ctx;
  const parent = await openParent(ctx, key).catch((err: unknown) => {
    if (errnoOf(err) === 'ENOTDIR') return undefined;
    throw err;
  });
  if (parent === undefined) return { key, was: 'absent' };
  try {
    const from = parent.child(posix.basename(key));
    const st = await fsp.lstat(from).catch((err: unknown) => {
      if (isAbsent(err)) return undefined;
      throw err;
    });
    if (st === undefined) return { key, was: 'absent' };
    if (st.isDirectory()) return { key, was: 'dir' };
    if (st.isSymbolicLink()) return { key, was: 'link', linkText: await fsp.readlink(from) };
    if (!st.isFile()) return { key, was: 'other' };
    try {
      await fsp.link(from, dir.child(copy));
    } catch (err) {
      // No hard links here (another filesystem below the root, or none at all): a copy.
      if (!['EXDEV', 'EPERM', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(errnoOf(err) ?? '')) throw err;
      await copyFile(ctx, from, dir, copy, st.mode);
    }
    return { key, was: 'file', copy };
  } finally {
    await parent.close();
  }
}

async function copyFile(ctx: LocalContext, from: string, dir: DirAnchor, name: string, mode: number): Promise<void> {
  const source = await ctx.fsp.open(from, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const bytes = await source.readFile();
    const out = await ctx.fsp.open(dir.child(name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode & 0o7777);
    try {
      await out.writeFile(bytes);
      if (ctx.durable) await out.sync();
    } finally {
      await out.close();
    }
  } finally {
    await source.close();
  }
}

/** Writes `name` in `dir` (through a temp name and a rename), durable with the directory. */
export async function writeDurably(ctx: LocalContext, dir: DirAnchor, name: string, text: string): Promise<void> {
  const tmp = `${name}.new`;
  const handle = await ctx.fsp.open(dir.child(tmp), constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600);
  try {
    await handle.writeFile(text);
    if (ctx.durable) await handle.sync();
  } finally {
    await handle.close();
  }
  await ctx.fsp.rename(dir.child(tmp), dir.child(name));
  if (ctx.durable) await dir.handle.sync();
}

/** A failed call (a full disk a moment ago) is tried once more: a journal left behind is run again. */
async function removeJournalRetrying(ctx: LocalContext, name: string): Promise<void> {
  try {
    await removeJournal(ctx, name);
  } catch {
    await removeJournal(ctx, name);
  }
}

/**
 * Removes a journal's directory: the record first, durably (a directory without one is a
 * journal that never started, whatever else is left in it), then the rest.
 */
export async function removeJournal(ctx: LocalContext, name: string): Promise<void> {
  const { fsp } = ctx;
  let dir: DirAnchor;
  try {
    dir = await ctx.openDir(posix.join(ctx.root, name));
  } catch (err) {
    if (isAbsent(err)) return;
    throw err;
  }
  try {
    await fsp.unlink(dir.child(RECORD_NAME)).catch(ignoreErrno('ENOENT'));
    if (ctx.durable) await dir.handle.sync();
    for (const entry of await fsp.readdir(dir.self)) await fsp.unlink(dir.child(entry)).catch(ignoreErrno('ENOENT'));
  } finally {
    await dir.close();
  }
  const root = await ctx.openDir(ctx.root);
  try {
    await fsp.rmdir(root.child(name)).catch(ignoreErrno('ENOENT'));
  } finally {
    await root.close();
  }
}
