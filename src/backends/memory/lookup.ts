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
  isSymlink?(): boolean;
  getSize(): number;
  canRead(uid: number, gid: number): boolean;
  /** A copy of the content (memfs also sets the access time). */
  getBuffer(): Buffer;
  /** On memfs's own nodes only: the write permission, and the content replaced by a copy of `buf`. */
  canWrite?(uid: number, gid: number): boolean;
  canExecute?(uid: number, gid: number): boolean;
  setBuffer?(buf: Uint8Array): void;
  /** On memfs's own nodes only: the content's storage (its first `size` bytes are the content). */
  readonly buf?: Buffer;
  readonly size?: number;
  /** On memfs's own nodes only: what its lstat reports. */
  readonly mode?: number;
  readonly mtime?: Date;
}

export interface CoreLink {
  getNode(): CoreNode;
  getPath(): string;
  /** On memfs's own links only: a directory's entries by name (with `.` and `..`). */
  readonly children?: ReadonlyMap<string, CoreLink>;
  /** On memfs's own links only: the entry `name` of a directory. */
  getChild?(name: string): CoreLink | undefined;
}

export type CoreLookup = { readonly ok: true; readonly value: CoreLink } | { readonly ok: false; readonly err: { readonly code: string } };

interface Core {
  walk(path: string | string[], resolveSymlinks: boolean, checkExistence: boolean, checkAccess: boolean, funcName?: string): CoreLookup;
  /** A new entry `name` in `parent`, with a new node of `mode` owned by the volume's ids. */
  createLink(parent: CoreLink, name: string, isDirectory: boolean, mode: number): CoreLink;
}

/** A volume with the ids its permission checks are made against. */
interface Ids {
  readonly vol: Volume;
  readonly uid: number;
  readonly gid: number;
}

function coreOf(vol: Volume): Partial<Core> | undefined {
  return (vol as unknown as { readonly _core?: Partial<Core> })._core;
}

/** The entry at `path` with every check memfs's own calls make on the way (links followed when `follow`). */
export function lookup(ctx: { readonly vol: Volume }, path: string, follow: boolean): CoreLookup {
  const core = coreOf(ctx.vol);
  // `_core` is memfs's own: a release without it gets the same answers through the public calls.
  if (typeof core?.walk === 'function') return core.walk(stepsOf(path) ?? path, follow, true, true, follow ? 'open' : 'lstat');
  return publicLookup(ctx.vol, path, follow);
}

/**
 * The segments of a plain absolute path (no empty, `.` or `..` segment, no trailing slash), or
 * undefined: memfs then splits the path itself, after resolving it (which costs more than the walk).
 */
function stepsOf(path: string): string[] | undefined {
  if (path === '/') return [];
  if (path.charCodeAt(0) !== 47 || path.charCodeAt(path.length - 1) === 47) return undefined;
  const steps = path.slice(1).split('/');
  for (const s of steps) if (s === '' || s === '.' || s === '..') return undefined;
  return steps;
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

/** The directory of a path, where it plainly exists and may be searched, and the path's entry in it. */
export interface EntryAt {
  readonly dir: CoreLink & { getChild(name: string): CoreLink | undefined };
  readonly name: string;
  readonly child: CoreLink | undefined;
}

/**
 * The directory of `path` and its entry named as `path`'s last segment, in one walk, where that
 * directory plainly exists, may be searched, and is reached through no link; undefined otherwise
 * (the caller then takes the general path).
 */
export function entryAt(ctx: Ids, path: string): EntryAt | undefined {
  if (path === '/') return undefined;
  const parent = posix.dirname(path);
  const found = lookup(ctx, parent, true);
  if (!found.ok || (found.value.getPath() || '/') !== parent) return undefined;
  const dir = found.value;
  const node = dir.getNode();
  if (dir.getChild === undefined || !node.isDirectory() || node.canExecute?.(ctx.uid, ctx.gid) !== true) return undefined;
  const name = posix.basename(path);
  return { dir: dir as EntryAt['dir'], name, child: dir.getChild(name) };
}

/**
 * Creates the regular file `name` in `at`, holding a copy of `bytes`, as memfs's writeFileSync
 * would (mode 0666, the volume's ids) where the directory may be written: no open/close. False
 * where anything is not plainly so (the caller then writes through memfs for the exact answer).
 */
export function createIn(ctx: Ids, at: EntryAt, bytes: Uint8Array): boolean {
  const core = coreOf(ctx.vol);
  const node = at.dir.getNode();
  // The directory's node is of the class the file's will be: setBuffer is there too.
  if (at.child !== undefined || typeof core?.createLink !== 'function' || node.setBuffer === undefined) return false;
  if (node.canWrite?.(ctx.uid, ctx.gid) !== true) return false;
  core.createLink(at.dir, at.name, false, 0o666).getNode().setBuffer!(bytes);
  return true;
}

/** A miss that means "nothing there" (as opposed to refused or looping). */
export const isAbsent = (found: CoreLookup): boolean => !found.ok && (found.err.code === 'ENOENT' || found.err.code === 'ENOTDIR');

/** What an entry's lstat reports, read from its node. */
export interface NodeStat {
  isSymbolicLink(): boolean;
  isFile(): boolean;
  isDirectory(): boolean;
  readonly size: number;
  readonly mode: number;
  readonly mtimeMs: number;
}

/**
 * The entries of the directory at `path`, each with what its lstat would report, in no set order
 * (the seam orders listings), without a walk per entry. Only where `path` is a directory reached
 * through no link that may be read and searched (as readdir and each lstat require) and memfs's
 * nodes are at hand; undefined otherwise (the caller then lists through memfs).
 */
export function dirChildren(ctx: Ids, path: string): { readonly name: string; readonly stat: NodeStat }[] | undefined {
  const found = lookup(ctx, path, true);
  if (!found.ok || (found.value.getPath() || '/') !== path) return undefined;
  const dir = found.value;
  const node = dir.getNode();
  if (dir.children === undefined || !node.isDirectory() || !node.canRead(ctx.uid, ctx.gid) || node.canExecute?.(ctx.uid, ctx.gid) !== true) return undefined;
  const out: { name: string; stat: NodeStat }[] = [];
  for (const [name, link] of dir.children) {
    if (name === '.' || name === '..') continue;
    const n = link.getNode();
    if (n.mode === undefined || n.mtime === undefined || n.isSymlink === undefined) return undefined;
    const mode = n.mode;
    const isLink = n.isSymlink();
    out.push({
      name,
      stat: { isSymbolicLink: () => isLink, isFile: () => n.isFile(), isDirectory: () => n.isDirectory(), size: n.getSize(), mode, mtimeMs: n.mtime.getTime() },
    });
  }
  return out;
}
