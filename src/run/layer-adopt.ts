import { chmodSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { UpperSnapshot } from '../backends/overlay/state.js';
import { readManifest, signature, writeManifest, type LayerPaths } from './layer.js';

/** Renames between two turns of the event loop (host calls, no thread-pool round trip each). */
const SLICE = 256;

/**
 * After an import: the files the run imported are moved from its upper directory into the kept
 * layer (a rename each, on one filesystem), so the next run finds them laid out already instead
 * of writing them again. Only a file whose entry in the sandbox is still the one the run made
 * (`imported`, the same object in `layer`) moves, and only where the layer holds no directory or
 * removal in the way; the rest is left to the next build. Marked dirty meanwhile: killed, the
 * next build redoes the layer whole. Returns how many files moved.
 */
export async function adoptUpper(paths: LayerPaths, upper: string, root: string, files: readonly string[], imported: UpperSnapshot, layer: UpperSnapshot): Promise<number> {
  const manifest = await readManifest(paths.manifest);
  if (manifest === undefined || files.length === 0) return 0;
  const entries: Record<string, string> = { ...manifest.entries };
  await writeManifest(paths.manifest, true, entries);
  let moved = 0;
  for (const [i, path] of files.entries()) {
    if (i % SLICE === SLICE - 1) await new Promise<void>((resolve) => setImmediate(resolve));
    const entry = layer.entries.get(path);
    if (entry?.kind !== 'file' || imported.entries.get(path) !== entry) continue;
    const rel = relative(root, path);
    const dirs = ancestors(rel);
    if (!dirs.every((d) => clearDir(entries[d], layer, join(root, d)))) continue;
    const sig = entries[rel];
    if (sig === 'd' || sig === 'do') continue;
    const at = join(paths.dir, rel);
    // Out of the manifest until the file is in place: a failure leaves it to the next build.
    delete entries[rel];
    try {
      rmSync(at, { force: true });
      mkdirSync(dirname(at), { recursive: true });
      renameSync(join(upper, rel), at);
      chmodSync(at, entry.executable === true ? 0o755 : 0o644);
    } catch {
      continue;
    }
    for (const d of dirs) if (layer.dirs.has(join(root, d))) entries[d] = 'd';
    entries[rel] = signature(entry);
    moved++;
  }
  await writeManifest(paths.manifest, false, entries);
  return moved;
}

/** The directories above `rel` in the layer, topmost first. */
function ancestors(rel: string): string[] {
  const out: string[] = [];
  for (let d = dirname(rel); d !== '.' && d !== '/'; d = dirname(d)) out.unshift(d);
  return out;
}

/** A directory of the layer a file may go below: none or a plain one there, and not one made again (opaque). */
function clearDir(sig: string | undefined, layer: UpperSnapshot, key: string): boolean {
  if (layer.opaque.has(key)) return false;
  return sig === undefined || sig === 'd';
}
