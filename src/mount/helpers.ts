import { type FileSystem, type FsDirEntry, type FsInfo, type FsTarget } from '../seam/index.js';
import { Inodes, type Stat } from './attrs.js';
import type { AttrCache } from './cache.js';
import { ERRNO, Errno, fail, toNegativeErrno } from './errno.js';
import type { OpenFiles } from './handles.js';

export interface OpsContext {
  readonly fs: FileSystem;
  /** The contract directory shown at the mountpoint's root. */
  readonly base: string;
  readonly readOnly: boolean;
  readonly files: OpenFiles;
  /** Recent attributes (empty unless the kernel may cache them too). */
  readonly cache: AttrCache;
  /** Told of failures that are no contract error (a bug, not a refusal). */
  readonly onUnexpected?: (op: string, err: unknown) => void;
}

export type Cb = (code: number, ...values: unknown[]) => void;
export const UNVERSIONED_STAT = { versioned: false } as const;

export interface Helpers {
  readonly ctx: OpsContext;
  readonly inodes: Inodes;
  readonly started: number;
  reply(op: string, cb: Cb, fn: () => Promise<unknown>): void;
  /** The contract path a FUSE path names. */
  absolute(path: string): string;
  /** Answered from the attribute cache when it holds `path` (no link: its key is its own). */
  target(path: string): Promise<FsTarget>;
  /**
   * The target of a name the kernel just found absent (create, mkdir): derived from its cached
   * parent's key where there is one, as resolving it would give (an absent name is no link).
   */
  newTarget(path: string): Promise<FsTarget>;
  /** The target naming a link at `path` itself (its last component not followed). */
  linkTarget(path: string): Promise<FsTarget>;
  /** Throws EROFS on a read-only mount. */
  writable(): void;
  info(t: FsTarget): Promise<FsInfo>;
}

export function helpers(ctx: OpsContext): Helpers {
  const { fs } = ctx;
  const absolute = (path: string) => (path === '/' ? ctx.base : ctx.base === '/' ? path : ctx.base + path);
  return {
    ctx,
    inodes: new Inodes(),
    started: Date.now(),
    reply(op, cb, fn) {
      fn().then(
        (value) => {
          if (value === SENT) return;
          if (typeof value === 'number') cb(value);
          else if (value === undefined) cb(0);
          else cb(0, value);
        },
        (err: unknown) => {
          if (!(err instanceof Errno) && !(err instanceof Error && err.name === 'FsError')) ctx.onUnexpected?.(op, err);
          cb(toNegativeErrno(err));
        },
      );
    },
    absolute,
    target(path) {
      const hit = ctx.cache.keyOf(path);
      return hit === undefined ? fs.resolve(absolute(path)) : Promise.resolve({ targetKey: hit.key, displayPath: absolute(path) });
    },
    newTarget(path) {
      const at = path.lastIndexOf('/');
      const dir = at <= 0 ? '/' : path.slice(0, at);
      const parent = path === '/' ? undefined : ctx.cache.keyOf(dir);
      if (parent === undefined || !parent.dir) return fs.resolve(absolute(path));
      return Promise.resolve({ targetKey: fs.childKey({ targetKey: parent.key, displayPath: absolute(dir) }, path.slice(at + 1)), displayPath: absolute(path) });
    },
    linkTarget: (path) => fs.resolve(absolute(path), { noFollow: true }),
    writable() {
      if (ctx.readOnly) fail(ERRNO.EROFS);
    },
    // No version is needed to answer getattr or a type check: nothing is hashed or listed for one.
    info: async (t) => (await fs.stat(t, UNVERSIONED_STAT)) ?? fail(ERRNO.ENOENT),
  };
}


export type Link = { target: FsTarget; text: string };


/**
 * The link at `path` and its text, or undefined when its last component is no link: only a name
 * that resolves elsewhere when followed is asked for its text.
 */
export async function linkAt(h: Helpers, path: string): Promise<Link | undefined> {
  const found = await lookup(h, path);
  return found.link === undefined ? undefined : { target: found.target, text: found.link };
}

/**
 * What `path` names: a link (its own target and text) or the target it resolves to. One resolve
 * answers most paths: a key equal to the path itself (keys of the built-in providers are
 * canonical paths) means no component was a link. Otherwise the name is resolved without
 * following its last component too, and a link is a name whose two targets differ.
 */
export async function lookup(h: Helpers, path: string): Promise<{ target: FsTarget; link?: string }> {
  const fs = h.ctx.fs;
  const read = fs.readlink?.bind(fs);
  const followed = await h.target(path).catch((err: unknown) => ({ failed: err }));
  if (path === '/' || read === undefined) {
    if ('failed' in followed) throw followed.failed;
    return { target: followed };
  }
  if (!('failed' in followed) && (followed.targetKey as string) === h.absolute(path)) return { target: followed };
  const own = await h.linkTarget(path);
  if (!('failed' in followed) && followed.targetKey === own.targetKey) return { target: followed };
  let text: string | undefined;
  try {
    text = await read(own);
  } catch {
    // No link: whatever made the followed resolve fail is the answer.
    if ('failed' in followed) throw followed.failed;
    return { target: followed };
  }
  return { target: own, link: text };
}

/**
 * Keeps a listing's attributes for the getattr that follows each name. A name whose target is
 * not its own path (a link, or a provider with opaque keys) is left to getattr.
 */
export function remember(h: Helpers, dir: string, entries: readonly FsDirEntry[], stats: readonly Stat[]): void {
  const prefix = dir === '/' ? '/' : `${dir}/`;
  const base = h.absolute(dir);
  const absPrefix = base === '/' ? '/' : `${base}/`;
  entries.forEach((e, i) => {
    if ((e.target.targetKey as string) !== absPrefix + e.name || e.type === 'other') return;
    // Without the listing's size and time, getattr would answer otherwise than the provider's stat.
    if (e.mtimeMs === undefined || (e.type === 'file' && e.size === undefined)) return;
    h.ctx.cache.set(prefix + e.name, e.target.targetKey, stats[i]!);
  });
}

/** Returned by an op that already answered (it passes more than one value). */
export const SENT = Symbol('sent');
