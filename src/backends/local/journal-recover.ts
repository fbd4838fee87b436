import { constants } from 'node:fs';
import { symlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { posix } from 'node:path';
import type { FsPendingJournal } from '../../seam/journal.js';
import { compareNames } from '../../seam/resolve.js';
import type { DirAnchor } from './anchor.js';
import type { LocalContext } from './context.js';
import { ensureDir, openParent } from './dirs.js';
import { errnoOf, guard, ignoreErrno, isAbsent } from './errors.js';
import { CLAIM_PREFIX, JOURNAL_DIR_PATTERN, RECORD_NAME, activeJournals, journalName, removeJournal, type JournalEntry, type JournalRecord } from './journal.js';
import { isTempOf } from './temps.js';

/** Unfinished journals under the root whose process is gone, each claimed by this process. */
export async function pendingJournals(ctx: LocalContext): Promise<FsPendingJournal[]> {
  const root = await ctx.openDir(ctx.root);
  const found: FsPendingJournal[] = [];
  try {
    const names = (await ctx.fsp.readdir(root.self)).filter((n) => JOURNAL_DIR_PATTERN.test(n) && !activeJournals.has(n)).sort();
    for (const name of names) {
      const claimed = await claim(ctx, root, name);
      if (claimed !== undefined) found.push(pendingOf(ctx, claimed.name, claimed.record));
    }
  } finally {
    await root.close();
  }
  return found;
}

/**
 * Takes an unfinished journal over (renamed to a name of this process's, so two openers never
 * both take it), unless a live process on this host owns or claimed it. Undefined when not taken.
 */
async function claim(ctx: LocalContext, root: DirAnchor, name: string): Promise<{ name: string; record: JournalRecord | undefined } | undefined> {
  const { fsp } = ctx;
  let dir: DirAnchor;
  try {
    dir = await ctx.openDir(posix.join(ctx.root, name));
  } catch (err) {
    if (isAbsent(err)) return undefined;
    throw err;
  }
  let record: JournalRecord | undefined;
  let claims: number[];
  try {
    record = await readRecord(ctx, dir);
    claims = (await fsp.readdir(dir.self)).filter((n) => n.startsWith(CLAIM_PREFIX)).map((n) => Number(n.slice(CLAIM_PREFIX.length)));
  } finally {
    await dir.close();
  }
  const here = record === undefined || record.host === hostname();
  if (here && [record?.pid, ...claims].some((pid) => pid !== undefined && alive(pid))) return undefined;
  const mine = journalName();
  activeJournals.add(mine);
  try {
    await fsp.rename(root.child(name), root.child(mine));
  } catch (err) {
    activeJournals.delete(mine);
    if (isAbsent(err)) return undefined;
    throw err;
  }
  const taken = await ctx.openDir(posix.join(ctx.root, mine));
  try {
    const handle = await fsp.open(taken.child(`${CLAIM_PREFIX}${process.pid}`), constants.O_WRONLY | constants.O_CREAT, 0o600);
    await handle.close();
  } finally {
    await taken.close();
  }
  return { name: mine, record };
}

function alive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoOf(err) === 'EPERM';
  }
}

async function readRecord(ctx: LocalContext, dir: DirAnchor): Promise<JournalRecord | undefined> {
  try {
    const handle = await ctx.fsp.open(dir.child(RECORD_NAME), constants.O_RDONLY | constants.O_NOFOLLOW);
    const text = await handle.readFile('utf8').finally(() => handle.close());
    const record = JSON.parse(text) as JournalRecord;
    return record?.version === 1 && Array.isArray(record.entries) ? record : undefined;
  } catch (err) {
    // No record (killed before it was written): nothing was changed yet. A bad one: the same.
    if (isAbsent(err) || err instanceof SyntaxError) return undefined;
    throw err;
  }
}

function pendingOf(ctx: LocalContext, name: string, record: JournalRecord | undefined): FsPendingJournal {
  const entries = (record?.entries ?? []).filter((e) => typeof e?.key === 'string' && e.key.startsWith(`${ctx.root}/`));
  const done = async () => {
    await removeTemps(ctx, entries);
    await removeJournal(ctx, name);
    activeJournals.delete(name);
  };
  return {
    kind: record?.kind,
    owner: record?.owner,
    payload: record?.payload,
    pid: record?.pid,
    rollBack: () =>
      guard(`cannot roll back an unfinished ${record?.kind ?? 'operation'}`, async () => {
        const restored = await restore(ctx, name, entries);
        await done();
        return restored;
      }),
    discard: () => guard(`cannot remove the record of an unfinished ${record?.kind ?? 'operation'}`, done),
    release: () =>
      guard(`cannot leave an unfinished ${record?.kind ?? 'operation'}`, async () => {
        const dir = await ctx.openDir(posix.join(ctx.root, name));
        try {
          await ctx.fsp.unlink(dir.child(`${CLAIM_PREFIX}${process.pid}`)).catch(ignoreErrno('ENOENT'));
        } finally {
          await dir.close();
          activeJournals.delete(name);
        }
      }),
  };
}

/**
 * Puts every path back: what the operation made goes (deepest first), the directories there
 * before are made again (shallowest first), and the old files and links come back in place.
 */
async function restore(ctx: LocalContext, name: string, entries: readonly JournalEntry[]): Promise<string[]> {
  const restored = new Set<string>();
  const byDepth = [...entries].sort((a, b) => compareNames(a.key, b.key));
  for (const e of [...byDepth].reverse()) if (e.was === 'absent' && (await removeAt(ctx, e.key, false))) restored.add(e.key);
  for (const e of byDepth) if (e.was === 'dir' && (await makeDirAt(ctx, e.key))) restored.add(e.key);
  const dir = await ctx.openDir(posix.join(ctx.root, name));
  try {
    for (const e of byDepth) {
      if (e.was === 'file' && e.copy !== undefined && (await putBack(ctx, dir, e.key, e.copy))) restored.add(e.key);
      if (e.was === 'link' && e.linkText !== undefined && (await relink(ctx, e.key, e.linkText))) restored.add(e.key);
    }
  } finally {
    await dir.close();
  }
  await syncParents(ctx, entries);
  return [...restored].sort(compareNames);
}

/** Removes what is at `key` (a directory only when empty; a special file only with `anyType`); whether anything went. */
async function removeAt(ctx: LocalContext, key: string, anyType: boolean): Promise<boolean> {
  const parent = await openParent(ctx, key).catch(() => undefined);
  if (parent === undefined) return false;
  try {
    const at = parent.child(posix.basename(key));
    const st = await ctx.fsp.lstat(at).catch(() => undefined);
    if (st === undefined) return false;
    if (st.isDirectory()) {
      await ctx.fsp.rmdir(at).catch(ignoreErrno('ENOTEMPTY', 'EEXIST', 'ENOENT'));
      return (await ctx.fsp.lstat(at).catch(() => undefined)) === undefined;
    }
    if (!anyType && !st.isFile() && !st.isSymbolicLink()) return false;
    await ctx.fsp.unlink(at).catch(ignoreErrno('ENOENT'));
    return true;
  } finally {
    await parent.close();
  }
}

async function makeDirAt(ctx: LocalContext, key: string): Promise<boolean> {
  const parent = await openParent(ctx, key).catch(() => undefined);
  const st = parent && (await ctx.fsp.lstat(parent.child(posix.basename(key))).catch(() => undefined));
  await parent?.close();
  if (st?.isDirectory()) return false;
  if (st !== undefined) await removeAt(ctx, key, true);
  await (await ensureDir(ctx, key, `cannot restore "${key}"`)).close();
  return true;
}

/** The old file back in place (its link renamed over whatever is there); false when done before. */
async function putBack(ctx: LocalContext, dir: DirAnchor, key: string, copy: string): Promise<boolean> {
  if ((await ctx.fsp.lstat(dir.child(copy)).catch(() => undefined)) === undefined) return false;
  const parent = await ensureDir(ctx, posix.dirname(key), `cannot restore "${key}"`);
  try {
    const at = parent.child(posix.basename(key));
    if ((await ctx.fsp.lstat(at).catch(() => undefined))?.isDirectory()) await ctx.fsp.rmdir(at);
    await ctx.fsp.rename(dir.child(copy), at);
    return true;
  } finally {
    await parent.close();
  }
}

async function relink(ctx: LocalContext, key: string, text: string): Promise<boolean> {
  const parent = await ensureDir(ctx, posix.dirname(key), `cannot restore "${key}"`);
  try {
    const at = parent.child(posix.basename(key));
    if ((await ctx.fsp.readlink(at).catch(() => undefined)) === text) return false;
    const st = await ctx.fsp.lstat(at).catch(() => undefined);
    if (st?.isDirectory()) await ctx.fsp.rmdir(at);
    else if (st !== undefined) await ctx.fsp.unlink(at);
    await symlink(text, at);
    return true;
  } finally {
    await parent.close();
  }
}

/** The temp files the operation's writes left next to its paths. */
async function removeTemps(ctx: LocalContext, entries: readonly JournalEntry[]): Promise<void> {
  const byDir = new Map<string, string[]>();
  for (const { key } of entries) {
    const d = posix.dirname(key);
    byDir.set(d, [...(byDir.get(d) ?? []), posix.basename(key)]);
  }
  for (const [d, names] of byDir) {
    let anchor: DirAnchor;
    try {
      anchor = await ctx.openDir(d);
    } catch {
      continue;
    }
    try {
      for (const n of await ctx.fsp.readdir(anchor.self)) {
        if (names.some((target) => isTempOf(n, target))) await ctx.fsp.unlink(anchor.child(n)).catch(ignoreErrno('ENOENT'));
      }
    } finally {
      await anchor.close();
    }
  }
}

async function syncParents(ctx: LocalContext, entries: readonly JournalEntry[]): Promise<void> {
  if (!ctx.durable) return;
  for (const d of new Set(entries.map((e) => posix.dirname(e.key)))) {
    const anchor = await ctx.openDir(d).catch(() => undefined);
    if (anchor === undefined) continue;
    await anchor.handle.sync().finally(() => anchor.close());
  }
}
