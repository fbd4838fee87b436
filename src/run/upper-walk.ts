import { lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/** A path the run made that the sandbox cannot hold, reported and not imported. */
export interface RunSkipped {
  readonly path: string;
  readonly reason: string;
}

/** What the program left in one place of the upper directory, read straight from the host. */
export type UpperItem =
  | { readonly kind: 'dir'; readonly rel: string }
  | { readonly kind: 'file'; readonly rel: string; readonly bytes: Buffer; readonly executable: boolean }
  | { readonly kind: 'link'; readonly rel: string; readonly text: string };

export interface UpperListing {
  /** Directories of the upper, parents before children ('' is the top). */
  readonly dirs: string[];
  readonly items: UpperItem[];
  readonly skipped: RunSkipped[];
}

/** Host calls between two turns of the event loop: the walk is synchronous (no thread-pool round trip per file) but never holds the loop long. */
const SLICE = 256;

const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The upper directory as it stands, after the program ended: directories, regular files (their
 * bytes and executable bit), symlinks; whiteouts are left out (the merged view shows removals);
 * what the sandbox cannot hold is listed in `skipped` by sandbox path (`pathOf`).
 */
export async function listUpper(upper: string, pathOf: (rel: string) => string): Promise<UpperListing> {
  const out: UpperListing = { dirs: [''], items: [], skipped: [] };
  let calls = 0;
  for (let i = 0; i < out.dirs.length; i++) {
    const rel = out.dirs[i]!;
    for (const name of readdirSync(join(upper, rel)).sort()) {
      if (++calls % SLICE === 0) await yieldTurn();
      const childRel = rel === '' ? name : `${rel}/${name}`;
      const at = join(upper, childRel);
      const info = lstatSync(at);
      if (info.isCharacterDevice() && info.rdev === 0) continue;
      if (info.isDirectory()) {
        out.dirs.push(childRel);
        out.items.push({ kind: 'dir', rel: childRel });
      } else if (info.isFile()) {
        if (info.nlink > 1) {
          out.skipped.push({ path: pathOf(childRel), reason: `a hard link (${info.nlink} names): the sandbox holds no hard links` });
          continue;
        }
        if ((info.mode & 0o7000) !== 0) out.skipped.push({ path: pathOf(childRel), reason: `mode ${(info.mode & 0o7777).toString(8)}: only the executable bit is kept` });
        out.items.push({ kind: 'file', rel: childRel, bytes: readFileSync(at), executable: (info.mode & 0o100) !== 0 });
      } else if (info.isSymbolicLink()) {
        out.items.push({ kind: 'link', rel: childRel, text: readlinkSync(at) });
      } else {
        out.skipped.push({ path: pathOf(childRel), reason: info.isFIFO() ? 'a FIFO' : info.isSocket() ? 'a socket' : 'a device' });
      }
    }
  }
  return out;
}
