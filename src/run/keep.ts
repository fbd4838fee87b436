import { cp, lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Scratch } from './scratch.js';
import type { RunConflict } from './types.js';

/** Copies the program's version of each conflicting path out of the upper, into conflicts/RUN/. */
export async function keepConflicts(scratch: Scratch, root: string, tops: readonly string[]): Promise<RunConflict[]> {
  const out: RunConflict[] = [];
  for (const path of tops) {
    const rel = relative(root, path);
    const from = join(scratch.upper, rel);
    const to = join(keptDir(scratch), rel);
    try {
      if (await isWhiteout(from).catch(() => true)) {
        out.push({ path });
        continue;
      }
      await mkdir(join(to, '..'), { recursive: true });
      // Whiteouts (the program removed something) are not copied: a removal keeps nothing.
      await cp(from, to, { recursive: true, verbatimSymlinks: true, filter: async (src) => !(await isWhiteout(src)) });
      out.push({ path, kept: to });
    } catch {
      out.push({ path });
    }
  }
  return out;
}

/**
 * A run whose import was refused keeps all the program wrote: the upper directory is moved whole
 * to conflicts/RUN/ (one rename), without its whiteouts. Undefined when it could not be kept.
 */
export async function keepUpper(scratch: Scratch): Promise<string | undefined> {
  const to = keptDir(scratch);
  try {
    await mkdir(join(to, '..'), { recursive: true });
    await rename(scratch.upper, to);
    await dropWhiteouts(to);
    return to;
  } catch {
    return undefined;
  }
}

function keptDir(scratch: Scratch): string {
  return join(scratch.dir, 'conflicts', scratch.id);
}

async function dropWhiteouts(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const at = join(dir, entry.name);
    if (entry.isDirectory()) await dropWhiteouts(at);
    else if (entry.isCharacterDevice() && (await isWhiteout(at))) await rm(at);
  }
}

async function isWhiteout(path: string): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  return info !== undefined && info.isCharacterDevice() && info.rdev === 0;
}
