import { lstat, mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { compareNames } from '../seam/index.js';
import type { UpperEntry, UpperSnapshot } from '../backends/overlay/state.js';
import { makeWhiteouts } from './host.js';

/**
 * The sandbox's changes laid out as an overlayfs lower layer over the project folder: files with
 * their executable bit, symlinks, whiteouts (character devices 0/0) for removals, and for a
 * removed-then-remade directory a whiteout for every project entry it no longer shows (no
 * xattrs needed). Kept between runs with a manifest (path → what is there), so a run rebuilds
 * only what the sandbox changed since the last: O(changes), not O(project).
 */
export interface LayerPaths {
  readonly dir: string;
  readonly manifest: string;
}

interface Manifest {
  readonly format: 'dsh-fs-run-layer';
  /** True from the first change of the layer until the manifest is written again: then rebuilt whole. */
  readonly dirty: boolean;
  readonly entries: Record<string, string>;
}

/** What a key needs in the layer, as a short signature (equal signatures: nothing to redo). */
export function signature(entry: UpperEntry): string {
  if (entry.kind === 'whiteout') return 'w';
  if (entry.kind === 'link') return `l:${entry.text}`;
  return `f:${entry.version}:${entry.executable === true ? 'x' : '-'}`;
}

function wanted(layer: UpperSnapshot, root: string): Map<string, string> {
  const want = new Map<string, string>();
  const rel = (key: string) => relative(root, key);
  const inside = (key: string) => key !== root && !rel(key).startsWith('..');
  for (const [key, entry] of layer.entries) if (inside(key)) want.set(rel(key), signature(entry));
  for (const key of layer.dirs) if (inside(key)) want.set(rel(key), layer.opaque.has(key) ? 'do' : 'd');
  // A file or link put where a project directory was removed hides it by itself: it keeps its own signature.
  for (const key of layer.opaque) if (inside(key) && !layer.dirs.has(key) && layer.entries.get(key) === undefined) want.set(rel(key), 'w');
  // Below such a file the state may still remember removals: nothing below a file can show.
  const files = new Set([...want].filter(([, sig]) => sig.startsWith('f:') || sig.startsWith('l:')).map(([r]) => r));
  if (files.size > 0) for (const r of want.keys()) if (hasAncestorIn(r, files)) want.delete(r);
  return want;
}

export async function readManifest(path: string): Promise<Manifest | undefined> {
  try {
    const m = JSON.parse(await readFile(path, 'utf8')) as Manifest;
    return m.format === 'dsh-fs-run-layer' && m.dirty === false && typeof m.entries === 'object' ? m : undefined;
  } catch {
    return undefined;
  }
}

export async function writeManifest(path: string, dirty: boolean, entries: Record<string, string>): Promise<void> {
  const m: Manifest = { format: 'dsh-fs-run-layer', dirty, entries };
  await writeFile(path, `${JSON.stringify(m)}\n`);
}

function hasAncestorIn(rel: string, set: Set<string>): boolean {
  for (let d = dirname(rel); d !== '.' && d !== '/'; d = dirname(d)) if (set.has(d)) return true;
  return false;
}

/** What the build did: how many layer entries it (re)made and removed. */
export interface LayerBuild {
  readonly made: number;
  readonly removed: number;
}

/** Brings the layer in `paths` to `layer` (the sandbox's upper layer, keyed by host paths under `root`). */
export async function buildLayer(paths: LayerPaths, layer: UpperSnapshot, root: string): Promise<LayerBuild> {
  const want = wanted(layer, root);
  const before = await readManifest(paths.manifest);
  if (before === undefined) await rm(paths.dir, { recursive: true, force: true });
  await mkdir(paths.dir, { recursive: true });
  const had = new Map(Object.entries(before?.entries ?? {}));
  const gone = [...had].filter(([rel, sig]) => want.get(rel) !== sig).map(([rel]) => rel);
  const goneSet = new Set(gone);
  const redo = [...want.keys()].filter((rel) => had.get(rel) !== want.get(rel) || hasAncestorIn(rel, goneSet)).sort(compareNames);
  const opaque = [...want].filter(([, sig]) => sig === 'do').map(([rel]) => rel);
  if (before !== undefined && gone.length === 0 && redo.length === 0 && opaque.length === 0) return { made: 0, removed: 0 };
  await writeManifest(paths.manifest, true, Object.fromEntries(had));
  for (const rel of gone.filter((r) => !hasAncestorIn(r, goneSet))) await rm(join(paths.dir, rel), { recursive: true, force: true });
  const whiteouts: string[] = [];
  const byKey = new Map([...layer.entries].map(([key, entry]) => [relative(root, key), entry] as const));
  for (const rel of redo) {
    const at = join(paths.dir, rel);
    const sig = want.get(rel)!;
    const entry = byKey.get(rel);
    // A directory already there (a parent made for a file) keeps what it holds.
    const isDir = (await lstat(at).catch(() => undefined))?.isDirectory() === true;
    if (!(isDir && (sig === 'd' || sig === 'do'))) await rm(at, { recursive: true, force: true });
    await mkdir(dirname(at), { recursive: true });
    if (sig === 'd' || sig === 'do') await mkdir(at, { recursive: true });
    else if (sig === 'w') whiteouts.push(at);
    else if (entry?.kind === 'link') await symlink(entry.text, at);
    else if (entry?.kind === 'file') await writeFile(at, entry.bytes, { mode: entry.executable === true ? 0o755 : 0o644 });
  }
  // A directory removed and made again shows nothing of the project below it: hide what the project has there.
  const opaqueSet = new Set(opaque);
  // The topmost only: hiding walks down through the layer's directories below.
  for (const rel of opaque.filter((r) => !hasAncestorIn(r, opaqueSet))) await hideProject(join(root, rel), join(paths.dir, rel), whiteouts);
  await makeWhiteouts(whiteouts);
  await writeManifest(paths.manifest, false, Object.fromEntries(want));
  return { made: redo.length, removed: gone.length };
}

/** Whiteouts in `layerDir` (and its layer subdirectories) for every entry of `projectDir` it does not hold. */
async function hideProject(projectDir: string, layerDir: string, whiteouts: string[]): Promise<void> {
  const project = await readdir(projectDir).catch(() => [] as string[]);
  if (project.length === 0) return;
  const held = new Map((await readdir(layerDir, { withFileTypes: true })).map((d) => [d.name, d.isDirectory()] as const));
  for (const name of project) {
    const isDir = held.get(name);
    if (isDir === undefined) whiteouts.push(join(layerDir, name));
    else if (isDir) {
      const info = await lstat(join(projectDir, name)).catch(() => undefined);
      if (info?.isDirectory()) await hideProject(join(projectDir, name), join(layerDir, name), whiteouts);
    }
  }
}
