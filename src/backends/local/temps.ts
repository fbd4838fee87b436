import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { FsError } from '../../seam/errors.js';
import { compareNames } from '../../seam/resolve.js';
import { Moved, type DirAnchor } from './anchor.js';
import type { LocalContext } from './context.js';
import { errnoOf, guard, ignoreErrno, isAbsent } from './errors.js';

export interface SweepOptions {
  /** Only temp files whose mtime is older than this are removed (default 10 minutes). */
  readonly olderThanMs?: number;
}

/** `.<up to 64 bytes of the target name>.<32 hex digits>.dsh-tmp`, in the target's directory. */
export const TEMP_NAME_PATTERN = /^\..*\.[0-9a-f]{32}\.dsh-tmp$/s;
const TEMP_SUFFIX = '.dsh-tmp';
const TEMP_PREFIX_BYTES = 64;

export function isTempName(name: string): boolean {
  return name.endsWith(TEMP_SUFFIX) && TEMP_NAME_PATTERN.test(name);
}

function tempPrefix(target: string): string {
  let prefix = '';
  let bytes = 0;
  for (const ch of target) {
    bytes += Buffer.byteLength(ch);
    if (bytes > TEMP_PREFIX_BYTES) break;
    prefix += ch;
  }
  return prefix;
}

export function tempName(target: string): string {
  return `.${tempPrefix(target)}.${randomBytes(16).toString('hex')}${TEMP_SUFFIX}`;
}

/** Whether `name` is a temp file made for writing the entry `target` of the same directory. */
export function isTempOf(name: string, target: string): boolean {
  const prefix = `.${tempPrefix(target)}.`;
  return isTempName(name) && name.startsWith(prefix) && name.length === prefix.length + 32 + TEMP_SUFFIX.length;
}

/**
 * Removes temp files of this provider's own naming pattern (left by a process killed mid-write)
 * anywhere under the root; never any other file. Returns the real paths removed.
 */
export function sweepTemps(ctx: LocalContext, sweep: SweepOptions = {}): Promise<string[]> {
  const { fsp } = ctx;
  const olderThanMs = sweep.olderThanMs ?? 10 * 60 * 1000;
  return guard('cannot sweep temp files', async () => {
    if (typeof olderThanMs !== 'number' || Number.isNaN(olderThanMs)) {
      throw new FsError('FS_INVALID_ARGUMENT', `olderThanMs must be a number, got ${String(olderThanMs)}`);
    }
    const cutoff = ctx.clock() - BigInt(Math.round(olderThanMs * 1e6));
    const removed: string[] = [];
    const pending = [ctx.root];
    while (pending.length > 0) {
      const dir = pending.pop()!;
      let anchor: DirAnchor;
      try {
        anchor = await ctx.openDir(dir);
      } catch (err) {
        // Gone, swapped for a link, or unreadable: nothing of ours can be swept there.
        if (isAbsent(err) || err instanceof Moved || errnoOf(err) === 'EACCES' || (err instanceof FsError && err.code === 'FS_OUTSIDE_ROOT')) continue;
        throw err;
      }
      try {
        for (const entry of await fsp.readdir(anchor.self, { withFileTypes: true })) {
          if (entry.isDirectory()) pending.push(posix.join(dir, entry.name));
          else if (entry.isFile() && isTempName(entry.name)) {
            const st = await fsp.lstat(anchor.child(entry.name), { bigint: true }).catch(() => undefined);
            if (st?.isFile() && st.mtimeNs < cutoff) {
              await fsp.unlink(anchor.child(entry.name)).catch(ignoreErrno('ENOENT'));
              removed.push(posix.join(dir, entry.name));
            }
          }
        }
      } finally {
        await anchor.close();
      }
    }
    return removed.sort(compareNames);
  });
}
