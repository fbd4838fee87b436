import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { FsError, throwIfAborted, toFsError } from '../seam/index.js';

export const LOCK_FILE = 'lock';

export interface StateLockOptions {
  /** Give up after this long (default 120 s): FS_IO_ERROR naming the holder. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Called once when the lock is busy, with the holder's pid (e.g. to say "waiting for ..."). */
  readonly onWait?: (holder: number | undefined) => void;
}

/** What `fn` learns about how the lock was had. */
export interface LockGrant {
  /** The pid of a dead holder whose lock this process took over (it died mid-operation), if any. */
  readonly tookOverFrom: number | undefined;
}

interface Holder {
  readonly pid: number;
  readonly host: string;
  readonly token: string;
}

/** A lock file older than this with no readable holder is left over from a crash mid-create. */
const UNREADABLE_GRACE_MS = 10_000;

/** A waiter marks itself with `lock.wait.<token>`, rewritten at each poll (at most every 200 ms). */
const WAIT_MARK = `${LOCK_FILE}.wait.`;
/** A mark not rewritten for this long is left over from a waiter that died. */
const WAIT_MARK_FRESH_MS = 2_000;

/**
 * Runs `fn` holding the sandbox's cross-process lock: a file created exclusively in the state
 * directory, naming its holder. A lock whose holder process (on this host) is gone is taken over.
 * The server holds it for each tool call and the review commands for commit and discard, so the
 * state document has one writer at a time.
 */
export async function withStateLock<T>(stateDir: string, fn: (grant: LockGrant) => Promise<T>, options: StateLockOptions = {}): Promise<T> {
  const path = join(stateDir, LOCK_FILE);
  const me: Holder = { pid: process.pid, host: hostname(), token: randomBytes(12).toString('hex') };
  const grant = await acquire(path, me, options);
  try {
    return await fn(grant);
  } finally {
    await release(path, me);
  }
}

async function acquire(path: string, me: Holder, options: StateLockOptions): Promise<LockGrant> {
  const mark = `${path}.wait.${me.token}`;
  let marked = false;
  try {
    return await poll(path, me, options, async () => {
      marked = true;
      await writeFile(mark, `${JSON.stringify(me)}\n`, { mode: 0o600 }).catch(() => {});
    });
  } finally {
    if (marked) await rm(mark, { force: true }).catch(() => {});
  }
}

/**
 * True when another taker is waiting for the lock of `stateDir` (its wait mark is fresh), so a
 * holder that keeps the lock through bursts of calls lets it go for a turn.
 */
export async function lockWanted(stateDir: string): Promise<boolean> {
  const names = (await readdir(stateDir)).filter((n) => n.startsWith(WAIT_MARK));
  for (const name of names) {
    const st = await stat(join(stateDir, name)).catch(() => undefined);
    if (st !== undefined && Date.now() - st.mtimeMs < WAIT_MARK_FRESH_MS) return true;
  }
  return false;
}

async function poll(path: string, me: Holder, options: StateLockOptions, waiting: () => Promise<void>): Promise<LockGrant> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  let told = false;
  let wait = 10;
  let dead: number | undefined;
  for (;;) {
    throwIfAborted(options.signal, 'cannot lock the sandbox state');
    if (await tryCreate(path, me)) return { tookOverFrom: dead };
    const holder = await readHolder(path);
    if (holder === 'gone') continue;
    if (await isStale(path, holder)) {
      if (await takeOver(path, holder)) dead = holder?.pid ?? 0;
      continue;
    }
    const pid = holder === undefined ? undefined : holder.pid;
    if (Date.now() >= deadline) {
      throw new FsError(
        'FS_IO_ERROR',
        `the sandbox state in "${dirname(path)}" is locked by ${pid === undefined ? 'another process' : `process ${pid}`}; ` +
          `try again when it has finished (if no dsh-fs process is running, remove "${path}")`,
      );
    }
    if (!told) {
      told = true;
      options.onWait?.(pid);
    }
    await waiting();
    await delay(wait, undefined, options.signal ? { signal: options.signal } : {}).catch(() => {});
    wait = Math.min(wait * 2, 200);
  }
}

/**
 * Removes a stale lock, but only the one judged stale: another taker may have replaced it since
 * with a live one. Takers go one at a time, through a second exclusively created file, and
 * re-read the holder before removing; nothing else can replace a lock that exists.
 */
async function takeOver(path: string, stale: Holder | undefined): Promise<boolean> {
  const guard = `${path}.takeover`;
  try {
    await (await open(guard, 'wx', 0o600)).close();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ENOENT') return false;
    if (code !== 'EEXIST') throw toFsError(err, `cannot take over the sandbox lock "${path}"`);
    // Another taker is at it. A guard left by a taker that crashed in between is cleared by age.
    const st = await stat(guard).catch(() => undefined);
    if (st !== undefined && Date.now() - st.mtimeMs > UNREADABLE_GRACE_MS) await rm(guard, { force: true }).catch(() => {});
    else await delay(5);
    return false;
  }
  try {
    const now = await readHolder(path);
    const same = stale === undefined ? now === undefined : typeof now === 'object' && now.token === stale.token;
    if (same) await rm(path, { force: true });
    return same;
  } finally {
    await rm(guard, { force: true }).catch(() => {});
  }
}

async function tryCreate(path: string, me: Holder): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx', 0o600).catch(async (err: unknown) => {
      if ((err as { code?: unknown }).code !== 'ENOENT') throw err;
      // The state directory was removed under a running server: make it again.
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      return open(path, 'wx', 0o600);
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'EEXIST') return false;
    throw toFsError(err, `cannot lock the sandbox state ("${path}")`);
  }
  try {
    await handle.writeFile(`${JSON.stringify(me)}\n`);
  } finally {
    await handle.close();
  }
  return true;
}

/** The holder, undefined when the file is unreadable or torn, 'gone' when it vanished meanwhile. */
async function readHolder(path: string): Promise<Holder | undefined | 'gone'> {
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return 'gone';
    throw toFsError(err, `cannot read the sandbox lock "${path}"`);
  }
  try {
    const h = JSON.parse(raw) as Partial<Holder>;
    if (typeof h.pid === 'number' && typeof h.host === 'string' && typeof h.token === 'string') return h as Holder;
  } catch {
    // Created but not yet written, or torn by a crash: judged by age below.
  }
  return undefined;
}

async function isStale(path: string, holder: Holder | undefined): Promise<boolean> {
  if (holder === undefined) {
    const st = await stat(path).catch(() => undefined);
    return st !== undefined && Date.now() - st.mtimeMs > UNREADABLE_GRACE_MS;
  }
  // A holder on another host (a shared state directory) cannot be checked: wait for it.
  if (holder.host !== hostname()) return false;
  return !processAlive(holder.pid);
}

/**
 * The pid of the process named by the lock when it is dead (on this host): it was killed while
 * holding the lock, e.g. mid-commit. Undefined when the lock is free, held by a live process, or
 * unreadable.
 */
export async function deadHolder(stateDir: string): Promise<number | undefined> {
  const holder = await readHolder(join(stateDir, LOCK_FILE)).catch(() => undefined);
  if (typeof holder !== 'object' || holder.host !== hostname()) return undefined;
  return processAlive(holder.pid) ? undefined : holder.pid;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: unknown }).code === 'EPERM';
  }
}

async function release(path: string, me: Holder): Promise<void> {
  const holder = await readHolder(path).catch(() => undefined);
  // Never remove a lock someone else took over (after judging us stale).
  if (typeof holder === 'object' && holder.token === me.token) await rm(path, { force: true }).catch(() => {});
}
