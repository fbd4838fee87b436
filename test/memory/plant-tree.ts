import type { Volume } from 'memfs';

/** An entry of a generated tree: a directory (its mode set last), a file, or a link. */
export type TreeEntry =
  | { readonly kind: 'dir'; readonly mode: number }
  | { readonly kind: 'file'; readonly size?: number; readonly mode?: number }
  | { readonly kind: 'link'; readonly to: string };

/**
 * Makes `entries` (paths relative to `/t`) on `vol`, parents first; an entry whose parent is not a
 * directory is left out. Directory modes are set last, deepest first, so every entry could be made.
 * A file holds its own relative path, or `size` bytes.
 */
export function plantTree(vol: Volume, entries: Readonly<Record<string, TreeEntry>>): void {
  vol.mkdirSync('/t');
  const modes: [string, number][] = [];
  for (const rel of Object.keys(entries).sort((x, y) => x.split('/').length - y.split('/').length)) {
    const path = `/t/${rel}`;
    const e = entries[rel]!;
    try {
      if (e.kind === 'dir') {
        vol.mkdirSync(path);
        modes.push([path, e.mode]);
      } else if (e.kind === 'file') {
        vol.writeFileSync(path, e.size === undefined ? rel : 'x'.repeat(e.size));
        if (e.mode !== undefined) vol.chmodSync(path, e.mode);
      } else vol.symlinkSync(e.to, path);
    } catch {
      // the parent is a file, a link or missing
    }
  }
  for (const [path, mode] of modes.reverse()) vol.chmodSync(path, mode);
}
