/**
 * Lookups on the volume's core (memfs's Superblock) that answer a miss with a value instead of a
 * thrown error, and permission checks against ids read once. memfs's own open asks the OS for
 * the uid and gid on every call (its Node.canRead defaults), a system call each, and builds an
 * Error with its message for every miss; on a small file either costs more than the read.
 */
import { posix } from 'node:path';
import type { Volume } from 'memfs';

/** The part of a memfs node the provider reads. */
export interface CoreNode {
  isFile(): boolean;
  isDirectory(): boolean;
  getSize(): number;
  canRead(uid: number, gid: number): boolean;
  /** A copy of the content (memfs also sets the access time). */
  getBuffer(): Buffer;
  /** On memfs's own nodes only: the write permission, and the content replaced by a copy of `buf`. */
  canWrite?(uid: number, gid: number): boolean;
  setBuffer?(buf: Uint8Array): void;
}

export interface CoreLink {
  getNode(): CoreNode;
  getPath(): string;
}

export type CoreLookup = { readonly ok: true; readonly value: CoreLink } | { readonly ok: false; readonly err: { readonly code: string } };

interface Core {
  walk(path: string, resolveSymlinks: boolean, checkExistence: boolean, checkAccess: boolean, funcName?: string): CoreLookup;
}

/** The entry at `path` with every check memfs's own calls make on the way (links followed when `follow`). */
export function lookup(ctx: { readonly vol: Volume }, path: string, follow: boolean): CoreLookup {
  const core = (ctx.vol as unknown as { readonly _core?: Partial<Core> })._core;
  // `_core` is memfs's own: a release without it gets the same answers through the public calls.
  if (typeof core?.walk === 'function') return core.walk(path, follow, true, true, follow ? 'open' : 'lstat');
  return publicLookup(ctx.vol, path, follow);
}

/** `lookup` through memfs's public calls (slower: a thrown error per miss). */
export function publicLookup(vol: Volume, path: string, follow: boolean): CoreLookup {
  try {
    const at = follow || path === '/' ? String(vol.realpathSync(path)) : posix.join(String(vol.realpathSync(posix.dirname(path))), posix.basename(path));
    const st = vol.lstatSync(at);
    const node: CoreNode = {
      isFile: () => st.isFile(),
      isDirectory: () => st.isDirectory(),
      getSize: () => Number(st.size),
      canRead: () => {
        try {
          vol.accessSync(at, 4);
          return true;
        } catch {
          return false;
        }
      },
      getBuffer: () => vol.readFileSync(at) as Buffer,
    };
    return { ok: true, value: { getNode: () => node, getPath: () => at } };
  } catch (err) {
    return { ok: false, err: { code: String((err as { code?: unknown } | null)?.code ?? 'EIO') } };
  }
}

/** A miss that means "nothing there" (as opposed to refused or looping). */
export const isAbsent = (found: CoreLookup): boolean => !found.ok && (found.err.code === 'ENOENT' || found.err.code === 'ENOTDIR');
