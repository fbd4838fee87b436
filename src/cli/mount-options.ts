// What `mount` and `run` check before anything is opened; kept apart so `run` on overlayfs loads no FUSE code.
import { constants as fsConstants } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { MountOptions } from '../mount/index.js';
import { UsageError, optionalString, type Command, type Parsed } from './args.js';

/**
 * A run's mount caches for as long as the run may last by default: the cache only delays when the
 * program sees another writer's changes (mount.md, "Caching"), and a run on overlayfs sees the
 * sandbox as it was at the start anyway; the guarantees against lost updates hold at any setting.
 */
const RUN_CACHE_SECONDS = 3600;

/** --read-only and --cache, checked before anything is mounted. */
export function mountOptions(parsed: Parsed, command: Command, log: (line: string) => void): MountOptions {
  const cache = optionalString(parsed, 'cache');
  const seconds = cache === undefined ? (command === 'run' ? RUN_CACHE_SECONDS : 0) : Number(cache);
  if (cache !== undefined && (cache.trim() === '' || !Number.isFinite(seconds) || seconds < 0 || seconds > 3600)) {
    throw new UsageError(`--cache takes a number of seconds from 0 to 3600, got "${cache}"`, command);
  }
  return { readOnly: parsed.values['read-only'] === true, cacheSeconds: seconds, onWarning: log };
}

/** Whether `command` is an executable file in a directory of the PATH-like list. */
export async function onPath(command: string, pathList: string): Promise<boolean> {
  for (const dir of pathList.split(':')) {
    if (dir !== '' && (await access(join(dir, command), fsConstants.X_OK).then(() => true, () => false))) return true;
  }
  return false;
}
