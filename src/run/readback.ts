import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { contentVersion, isFsError, type FileSystem, type FsChange, type FsDirEntry, type FsTarget, type FsVersion } from '../seam/index.js';
import { listUpper, type RunSkipped, type UpperItem } from './upper-walk.js';

export type { RunSkipped } from './upper-walk.js';

/** What the program changed, as sandbox paths (a removed directory counts once). */
export interface ReadBack {
  readonly added: string[];
  readonly changed: string[];
  readonly deleted: string[];
  readonly skipped: RunSkipped[];
}

interface Walk {
  readonly root: string;
  /** The sandbox as the run started, in memory: the run's changes are made here. */
  readonly fork: FileSystem;
  readonly out: ReadBack;
  /** What the start held directly in each directory the program touched, by sandbox path. */
  readonly start: Map<string, FsDirEntry>;
  /**
   * What the merged view no longer lists, removed from the fork only at the end: a file added
   * elsewhere with the same bytes is then moved there instead (a rename, as review shows it).
   */
  readonly gone: Map<string, { readonly file?: { readonly version: FsVersion; readonly size: number } }>;
  /** The files' writes, made at once (one batch: checked against a quota as a whole, one change of the fork). */
  readonly writes: FsChange[];
  /** Executable bits to set once the writes are made. */
  readonly modes: Array<readonly [string, boolean]>;
}

/**
 * Reads the upper directory back into `fork` (a view of the sandbox as the run started). The upper
 * is read straight from the host; the start is asked once per directory the program touched
 * (its listing), and per file only where the start had something at that path. What the merged
 * view no longer lists is removed (whiteouts and directories made opaque alike, so no xattr is
 * read); files are compared by content and executable bit with the start, symlinks by their
 * text; new directories are made. The files' writes go to the fork as one batch, so a quota on
 * the sandbox refuses the run's files as a whole (FS_QUOTA_EXCEEDED), before any is written.
 */
export async function readBack(upper: string, merged: string, root: string, fork: FileSystem): Promise<ReadBack> {
  const listing = await listUpper(upper, (rel) => join(root, rel));
  const w: Walk = { root, fork, out: { added: [], changed: [], deleted: [], skipped: listing.skipped }, start: new Map(), gone: new Map(), writes: [], modes: [] };
  for (const rel of listing.dirs) await startOf(w, rel, join(merged, rel));
  const files = listing.items.filter((i) => i.kind === 'file');
  for (const item of listing.items) if (item.kind === 'dir') await visitDir(w, item.rel);
  for (const item of files) await visitFile(w, item);
  // Removals first: under a quota, the room they give back is there for what the run adds.
  for (const path of w.gone.keys()) {
    await removeAt(fork, path);
    w.out.deleted.push(path);
  }
  for (const item of listing.items) if (item.kind === 'link') await visitLink(w, item.rel, item.text);
  if (w.writes.length > 0) await fork.applyChanges!(w.writes);
  for (const [path, executable] of w.modes) await fork.setExecutable!(await fork.resolve(path), executable);
  return w.out;
}

/** The start's entries in an upper directory that was a directory at the start, and what the merged view no longer lists there. */
async function startOf(w: Walk, rel: string, mergedDir: string): Promise<void> {
  const path = join(w.root, rel);
  if (rel !== '' && w.start.get(path)?.type !== 'directory') return;
  const { fork } = w;
  const entries = await fork.listDir(await fork.resolve(path), { stats: false }).catch((err: unknown) => {
    if (isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY')) return [];
    throw err;
  });
  const shown = new Set(await readdir(mergedDir));
  for (const entry of entries) {
    const child = join(path, entry.name);
    w.start.set(child, entry);
    if (shown.has(entry.name)) continue;
    const now = entry.type === 'file' ? await lookAt(fork, child) : undefined;
    const info = now?.kind === 'file' ? await fork.stat(now.target) : undefined;
    w.gone.set(child, info?.type === 'file' && info.size !== undefined ? { file: { version: info.version, size: info.size } } : {});
  }
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
  const path = join(w.root, rel);
  const was = w.start.get(path);
  if (was?.type === 'directory') return;
  const { fork } = w;
  if (was !== undefined) await removeAt(fork, path);
  await fork.mkdir(await fork.resolve(path));
  (was === undefined ? w.out.added : w.out.changed).push(path);
}

async function visitFile(w: Walk, { rel, bytes, executable }: Extract<UpperItem, { kind: 'file' }>): Promise<void> {
  const path = join(w.root, rel);
  const { fork } = w;
  const was = w.start.get(path);
  if (was === undefined) {
    const from = movedFrom(w, bytes);
    if (from !== undefined) {
      const target = await fork.resolve(path);
      await fork.rename(await fork.resolve(from), target);
      if ((await fork.stat(target))?.executable !== executable) w.modes.push([path, executable]);
      w.gone.delete(from);
      w.out.deleted.push(from);
    } else {
      w.writes.push({ kind: 'write', target: await fork.resolve(path), bytes, intent: { kind: 'createIfAbsent' } });
      if (executable) w.modes.push([path, true]);
    }
    w.out.added.push(path);
    return;
  }
  const now = await lookAt(fork, path);
  if (now.kind === 'file') {
    const info = await fork.stat(now.target);
    const same = info?.size === bytes.byteLength && info.version === contentVersion(bytes);
    if (!same) w.writes.push({ kind: 'write', target: now.target, bytes, intent: info === undefined ? { kind: 'createIfAbsent' } : { kind: 'replaceIfVersion', version: info.version } });
    const modeChanged = (now.executable === true) !== executable;
    if (modeChanged) w.modes.push([path, executable]);
    if (!same || modeChanged) w.out.changed.push(path);
    return;
  }
  await removeAt(fork, path);
  w.writes.push({ kind: 'write', target: await fork.resolve(path), bytes, intent: { kind: 'createIfAbsent' } });
  if (executable) w.modes.push([path, true]);
  w.out.changed.push(path);
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

async function visitLink(w: Walk, rel: string, text: string): Promise<void> {
  const path = join(w.root, rel);
  const { fork } = w;
  const now = await lookAt(fork, path);
  if (now.kind === 'link' && now.text === text) return;
  await removeAt(fork, path);
  await fork.symlink!(now.target, text);
  (now.kind === 'none' ? w.out.added : w.out.changed).push(path);
}
