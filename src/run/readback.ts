import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { contentVersion, isFsError, type FileSystem, type FsTarget, type FsVersion } from '../seam/index.js';

/** A path the run made that the sandbox cannot hold, reported and not imported. */
export interface RunSkipped {
  readonly path: string;
  readonly reason: string;
}

/** What the program changed, as sandbox paths (a removed directory counts once). */
export interface ReadBack {
  readonly added: string[];
  readonly changed: string[];
  readonly deleted: string[];
  readonly skipped: RunSkipped[];
}

interface Walk {
  readonly upper: string;
  /** The merged view (the project's path as the namespace sees it). */
  readonly merged: string;
  readonly root: string;
  /** The sandbox as the run started, in memory: the run's changes are made here. */
  readonly fork: FileSystem;
  readonly out: ReadBack;
  /**
   * What the merged view no longer lists, removed from the fork only at the end: a file added
   * elsewhere with the same bytes is then moved there instead (a rename, as review shows it).
   */
  readonly gone: Map<string, { readonly file?: { readonly version: FsVersion; readonly size: number } }>;
}

const WHOLE = Number.MAX_SAFE_INTEGER;

/**
 * Reads the upper directory back into `fork` (a view of the sandbox as the run started): for each
 * directory the program touched, what the merged view no longer lists is removed (whiteouts and
 * directories made opaque alike, so no xattr is read); regular files are compared by content
 * (and executable bit) with the start; symlinks by their text; new directories are made.
 */
export async function readBack(upper: string, merged: string, root: string, fork: FileSystem): Promise<ReadBack> {
  const out: ReadBack = { added: [], changed: [], deleted: [], skipped: [] };
  const gone: Walk['gone'] = new Map();
  await visitDir({ upper, merged, root, fork, out, gone }, '');
  for (const path of gone.keys()) {
    await removeAt(fork, path);
    out.deleted.push(path);
  }
  return out;
}

/** What the fork has at `path`, not following a link there. */
async function lookAt(fs: FileSystem, path: string): Promise<{ target: FsTarget; kind: 'none' | 'file' | 'directory' | 'link' | 'other'; text?: string; executable?: boolean }> {
  const target = await fs.resolve(path, { noFollow: true });
  const text = await fs.readlink!(target).catch(() => undefined);
  if (text !== undefined) return { target, kind: 'link', text };
  const info = await fs.stat(target, { versioned: false }).catch((err: unknown) => {
    if (isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY')) return undefined;
    throw err;
  });
  if (info === undefined) return { target, kind: 'none' };
  return { target, kind: info.type, ...(info.executable === undefined ? {} : { executable: info.executable }) };
}

async function removeAt(fs: FileSystem, path: string): Promise<void> {
  const now = await lookAt(fs, path);
  if (now.kind === 'link') await fs.removeLink!(now.target);
  else if (now.kind === 'directory') await fs.rmdir(now.target, { recursive: true });
  else if (now.kind !== 'none') await fs.remove(now.target);
}

async function visitDir(w: Walk, rel: string): Promise<void> {
  const { fork } = w;
  const here = await fork.resolve(join(w.root, rel));
  const shown = new Set(await readdir(join(w.merged, rel)));
  for (const entry of await fork.listDir(here, { stats: false })) {
    if (shown.has(entry.name)) continue;
    const path = join(w.root, rel, entry.name);
    const now = entry.type === 'file' ? await lookAt(fork, path) : undefined;
    const info = now?.kind === 'file' ? await fork.stat(now.target) : undefined;
    w.gone.set(path, info?.type === 'file' && info.size !== undefined ? { file: { version: info.version, size: info.size } } : {});
  }
  for (const name of (await readdir(join(w.upper, rel))).sort()) {
    const childRel = rel === '' ? name : `${rel}/${name}`;
    const info = await lstat(join(w.upper, childRel));
    const path = join(w.root, childRel);
    if (info.isCharacterDevice() && info.rdev === 0) continue;
    if (info.isDirectory()) {
      const now = await lookAt(fork, path);
      if (now.kind !== 'directory') {
        await removeAt(fork, path);
        await fork.mkdir(await fork.resolve(path));
        (now.kind === 'none' ? w.out.added : w.out.changed).push(path);
      }
      await visitDir(w, childRel);
    } else if (info.isFile()) {
      await visitFile(w, childRel, info.mode, info.nlink);
    } else if (info.isSymbolicLink()) {
      await visitLink(w, childRel);
    } else {
      w.out.skipped.push({ path, reason: info.isFIFO() ? 'a FIFO' : info.isSocket() ? 'a socket' : 'a device' });
    }
  }
}

async function visitFile(w: Walk, rel: string, mode: number, links: number): Promise<void> {
  const path = join(w.root, rel);
  if (links > 1) {
    w.out.skipped.push({ path, reason: `a hard link (${links} names): the sandbox holds no hard links` });
    return;
  }
  if ((mode & 0o7000) !== 0) w.out.skipped.push({ path, reason: `mode ${(mode & 0o7777).toString(8)}: only the executable bit is kept` });
  const bytes = await readFile(join(w.upper, rel));
  const executable = (mode & 0o100) !== 0;
  const { fork } = w;
  const now = await lookAt(fork, path);
  if (now.kind === 'file') {
    const before = await fork.readBytes(now.target, { maxBytes: WHOLE });
    const same = Buffer.compare(before.bytes, bytes) === 0;
    if (!same) await fork.writeBytes(now.target, bytes);
    const modeChanged = (now.executable === true) !== executable;
    if (modeChanged) await fork.setExecutable!(now.target, executable);
    if (!same || modeChanged) w.out.changed.push(path);
    return;
  }
  await removeAt(fork, path);
  const target = await fork.resolve(path);
  const from = now.kind === 'none' ? movedFrom(w, bytes) : undefined;
  if (from !== undefined) {
    await fork.rename(await fork.resolve(from), target);
    if ((await fork.stat(target))?.executable !== executable) await fork.setExecutable!(target, executable);
    w.gone.delete(from);
    w.out.deleted.push(from);
  } else {
    await fork.writeBytes(target, bytes);
    if (executable) await fork.setExecutable!(target, true);
  }
  (now.kind === 'none' ? w.out.added : w.out.changed).push(path);
}

/** A file the program removed whose bytes were exactly these (the first such, by path). */
function movedFrom(w: Walk, bytes: Uint8Array): string | undefined {
  let version: FsVersion | undefined;
  for (const [path, g] of w.gone) {
    if (g.file === undefined || g.file.size !== bytes.byteLength) continue;
    version ??= contentVersion(bytes);
    if (g.file.version === version) return path;
  }
  return undefined;
}

async function visitLink(w: Walk, rel: string): Promise<void> {
  const path = join(w.root, rel);
  const text = await readlink(join(w.upper, rel));
  const { fork } = w;
  const now = await lookAt(fork, path);
  if (now.kind === 'link' && now.text === text) return;
  await removeAt(fork, path);
  await fork.symlink!(now.target, text);
  (now.kind === 'none' ? w.out.added : w.out.changed).push(path);
}
