/**
 * Lookups on the volume's core (memfs's Superblock) that answer a miss with a value instead of a
 * thrown error, and permission checks against ids read once. memfs's own open asks the OS for
 * the uid and gid on every call (its Node.canRead defaults), a system call each, and builds an
 * Error with its message for every miss; on a small file either costs more than the read.
 */
import type { Volume } from 'memfs';

/** The part of a memfs node the provider reads. */
export interface CoreNode {
  isFile(): boolean;
  isDirectory(): boolean;
  getSize(): number;
  canRead(uid: number, gid: number): boolean;
  /** A copy of the content (memfs also sets the access time). */
  getBuffer(): Buffer;
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
  return ((ctx.vol as unknown as { readonly _core: Core })._core).walk(path, follow, true, true, follow ? 'open' : 'lstat');
}

/** A miss that means "nothing there" (as opposed to refused or looping). */
export const isAbsent = (found: CoreLookup): boolean => !found.ok && (found.err.code === 'ENOENT' || found.err.code === 'ENOTDIR');
