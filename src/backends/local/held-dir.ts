import { readlinkSync } from 'node:fs';
import { setImmediate } from 'node:timers';
import { openDirSync, type SyncDirAnchor } from './anchor.js';
import type { LocalContext } from './context.js';

/**
 * The parent directory of search's small reads, held open across consecutive reads in it (a
 * search reads a directory's files one after another). It is checked on every use as a fresh
 * open is checked, its descriptor's real path read back from /proc, so holding it saves the open
 * and the close of the directory, never the check. It is closed at the next turn of the event
 * loop, or when a read needs another directory.
 */
interface Held {
  readonly dir: string;
  readonly anchor: SyncDirAnchor;
}

const held = new WeakMap<LocalContext, Held>();

/** `fn` with the verified directory `dir` (the real path of a directory inside the root). */
export function withHeldDir<T>(ctx: LocalContext, dir: string, fn: (anchor: SyncDirAnchor) => T): T {
  const current = held.get(ctx);
  let anchor: SyncDirAnchor | undefined;
  if (current !== undefined) {
    if (current.dir === dir && stillAt(current.anchor, dir)) anchor = current.anchor;
    else release(ctx);
  }
  if (anchor === undefined) {
    // Checks as every open does (FS_OUTSIDE_ROOT, Moved, ENOENT): nothing is held when it throws.
    anchor = openDirSync(dir, ctx.root);
    held.set(ctx, { dir, anchor });
    setImmediate(() => release(ctx));
  }
  return fn(anchor);
}

/** Whether the held descriptor is still the directory `dir` (not moved, not removed). */
function stillAt(anchor: SyncDirAnchor, dir: string): boolean {
  try {
    return readlinkSync(anchor.self) === dir;
  } catch {
    return false;
  }
}

function release(ctx: LocalContext): void {
  const current = held.get(ctx);
  if (current === undefined) return;
  held.delete(ctx);
  current.anchor.close();
}
