// Where a sandbox over a directory keeps its state, for the library and the command alike.
import { hash } from 'node:crypto';
import { readlink, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * Where a sandbox over `root` keeps its upper layer by default: outside the root, in the user's
 * state directory, one directory per root (its real path, hashed).
 */
export function defaultStateDir(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  // The XDG spec says to ignore a relative value.
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.local', 'state');
  return join(base, 'dsh-fs', hash('sha256', root, 'hex').slice(0, 16));
}

/**
 * realpath of the deepest existing ancestor, with the rest appended (the directory may not exist
 * yet). A dangling link on the way is followed through its text, as mkdir would follow it.
 */
export async function realpathOfNearest(path: string, hops = 0): Promise<string> {
  const rest: string[] = [];
  let p = path;
  for (;;) {
    try {
      return join(await realpath(p), ...rest.reverse());
    } catch {
      const text = hops < 40 ? await readlink(p).catch(() => undefined) : undefined;
      if (text !== undefined) return realpathOfNearest(join(resolve(dirname(p), text), ...rest.reverse()), hops + 1);
      const parent = dirname(p);
      if (parent === p) return path;
      rest.push(basename(p));
      p = parent;
    }
  }
}
