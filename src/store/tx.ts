import { posix } from 'node:path';
import { FsError } from '../seam/errors.js';
import type { StoreChild, StoreHead, StoreTx } from './types.js';

const ROOT: StoreHead = { kind: 'directory' };

/** What is at `key` without a file's bytes; the root is always a directory. */
export async function headAt(tx: StoreTx, key: string): Promise<StoreHead | undefined> {
  if (key === '/') return ROOT;
  if (tx.head !== undefined) return tx.head(key);
  const entry = await tx.get(key);
  return entry?.kind === 'file' ? { kind: 'file', version: entry.version, size: entry.bytes.byteLength, executable: entry.executable, mtimeMs: entry.mtimeMs } : entry;
}

/** Every child of `dir`, every page read. */
export async function childrenOf(tx: StoreTx, dir: string): Promise<StoreChild[]> {
  const all: StoreChild[] = [];
  let next: string | undefined;
  do {
    const page = await tx.list(dir, next);
    all.push(...page.children);
    next = page.next;
  } while (next !== undefined);
  return all;
}

/** One segment below a canonical key. */
export const childKey = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

/** Every key strictly below `dir`, parents before their children. */
export async function keysBelow(tx: StoreTx, dir: string): Promise<string[]> {
  const out: string[] = [];
  const pending = [dir];
  while (pending.length > 0) {
    const at = pending.pop()!;
    for (const child of await childrenOf(tx, at)) {
      const key = childKey(at, child.name);
      out.push(key);
      if (child.kind === 'directory') pending.push(key);
    }
  }
  return out;
}

/** Creates the missing directories from the root down to `dir` itself; a file or link in the way is FS_NOT_DIRECTORY. */
export async function ensureDir(tx: StoreTx, dir: string, what: string): Promise<void> {
  const missing: string[] = [];
  for (let at = dir; ; at = posix.dirname(at)) {
    const head = await headAt(tx, at);
    if (head?.kind === 'directory') break;
    // Checked before anything is added: a refused call leaves no directory behind.
    if (head !== undefined) throw new FsError('FS_NOT_DIRECTORY', `${what}: "${at}" is not a directory`);
    missing.push(at);
  }
  const now = Date.now();
  for (const at of missing.reverse()) await tx.put(at, { kind: 'directory', mtimeMs: now });
}

/** The parent of `key` must already be a directory (links and K1). */
export async function requireParent(tx: StoreTx, key: string, what: string): Promise<void> {
  const parent = await headAt(tx, posix.dirname(key));
  if (parent === undefined) throw new FsError('FS_NOT_FOUND', `${what}: the parent directory does not exist`);
  if (parent.kind !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `${what}: the parent is not a directory`);
}
