/** What every part of the memory provider shares: its own Volume, and the lookups on it. */
import { Volume } from 'memfs';
import { canonicalPath, type LinkReader, type NodeKind } from '../../seam/index.js';
import { quietly } from '../../seam/errors.js';
import { lookup } from './lookup.js';

export interface MemoryContext {
  readonly cwd: string;
  readonly vol: Volume;
  /** The volume as the seam's resolveLinks reads it. */
  readonly reader: LinkReader;
  /** The ids memfs checks permissions against, read once (see volumeProcess). */
  readonly uid: number;
  readonly gid: number;
}

/** A fresh volume holding the cwd (and nothing else yet). */
export function createContext(cwdOption: string | undefined): MemoryContext {
  const cwd = canonicalPath(cwdOption ?? '/', '/');
  // Never memfs's global volume, and never a relative path (memfs resolves those against process.cwd()).
  const proc = volumeProcess();
  const vol = Volume.fromJSON({}, '/', { process: proc });
  const ctx: MemoryContext = {
    cwd,
    vol,
    uid: proc.getuid(),
    gid: proc.getgid(),
    reader: {
      kind(p: string): NodeKind {
        const st = lstat(ctx, p);
        if (!st) return 'missing';
        if (st.isSymbolicLink()) return 'link';
        if (st.isDirectory()) return 'directory';
        return st.isFile() ? 'file' : 'other';
      },
      readlink: (p: string) => String(vol.readlinkSync(p)),
    },
  };
  vol.mkdirSync(cwd, { recursive: true });
  return ctx;
}

/** The entry at `p` itself (a link not followed), or undefined when there is none. */
export function lstat(ctx: MemoryContext, p: string) {
  try {
    return quietly(() => ctx.vol.lstatSync(p));
  } catch (err) {
    if (isAbsentError(err)) return undefined;
    throw err;
  }
}

/** What `p` leads to (links followed), or undefined when that is nothing. */
export function follow(ctx: MemoryContext, p: string) {
  try {
    return quietly(() => ctx.vol.statSync(p));
  } catch (err) {
    // A loop leads to nothing, as a dangling link does (P4); memfs also answers ELOOP for a
    // resolved key that still holds `..` after a missing directory.
    if (isAbsentError(err) || (err as { code?: unknown } | null)?.code === 'ELOOP') return undefined;
    throw err;
  }
}

/**
 * `path` itself when it exists with no link on it, in one walk; else undefined (resolveLinks then
 * gives the seam's answer: memfs reads a link's `..` lexically, where a path walk follows the
 * link first).
 */
export function realKey(ctx: MemoryContext, path: string): string | undefined {
  // What realpathSync does, without the error object a miss would build and throw.
  const found = lookup(ctx, path, true);
  return found.ok && (found.value.getPath() || '/') === path ? path : undefined;
}

/**
 * Writes `bytes` as the whole content of `key`. memfs copies the bytes into the file; handed a
 * Uint8Array that is not a Buffer, it first makes a Buffer copy of its own as well.
 */
export function writeFile(ctx: MemoryContext, key: string, bytes: Uint8Array): void {
  ctx.vol.writeFileSync(key, Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

export function readFile(ctx: MemoryContext, key: string): Uint8Array {
  const buf = ctx.vol.readFileSync(key) as Buffer;
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/**
 * The process view memfs consults for a volume. memfs asks for the uid and gid on every path
 * walk, a system call each time (slow on some virtual machines); they are read once here.
 */
function volumeProcess() {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  return {
    cwd: () => '/',
    platform: process.platform,
    env: {},
    emitWarning: (message: string, type: string) => process.emitWarning(message, type),
    getuid: () => uid,
    getgid: () => gid,
  };
}

function isAbsentError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
