/** Trees in and out of a memory volume: the seed, `snapshot` and `restore`. */
import { posix } from 'node:path';
import { canonicalPath } from '../../seam/index.js';
import { readFile, type MemoryContext } from './context.js';

/** A seed or snapshot entry: file content, `null` for a directory, or a symlink. */
export type MemoryEntry = string | Uint8Array | null | { readonly symlink: string };
/** Flat tree of absolute (or cwd-relative) path → entry. */
export type MemoryTree = Readonly<Record<string, MemoryEntry>>;
export type MemorySnapshot = Readonly<Record<string, Uint8Array | null | { readonly symlink: string }>>;

/** Writes the tree's entries into the volume; relative paths are taken relative to the cwd. */
export function seed(ctx: MemoryContext, tree: MemoryTree | MemorySnapshot): void {
  const { vol } = ctx;
  for (const [raw, entry] of Object.entries(tree)) {
    const p = canonicalPath(raw, ctx.cwd);
    if (entry === null) {
      vol.mkdirSync(p, { recursive: true });
      continue;
    }
    vol.mkdirSync(posix.dirname(p), { recursive: true });
    if (typeof entry === 'object' && !(entry instanceof Uint8Array)) vol.symlinkSync(entry.symlink, p);
    else vol.writeFileSync(p, typeof entry === 'string' ? entry : Buffer.from(entry));
  }
}

export function snapshot(ctx: MemoryContext): MemorySnapshot {
  const { vol } = ctx;
  const out: Record<string, Uint8Array | null | { symlink: string }> = {};
  const walk = (dir: string) => {
    for (const name of vol.readdirSync(dir) as string[]) {
      const p = posix.join(dir, name);
      const st = vol.lstatSync(p);
      if (st.isSymbolicLink()) out[p] = { symlink: String(vol.readlinkSync(p)) };
      else if (st.isDirectory()) {
        out[p] = null;
        walk(p);
      } else if (st.isFile()) out[p] = new Uint8Array(readFile(ctx, p));
    }
  };
  walk('/');
  return out;
}

export function restore(ctx: MemoryContext, snap: MemorySnapshot): void {
  ctx.vol.reset();
  ctx.vol.mkdirSync(ctx.cwd, { recursive: true });
  seed(ctx, snap);
}
