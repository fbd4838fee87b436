import { posix } from 'node:path';
import { isFsError, type FileSystem, type FsInfo } from '../../seam/index.js';

/**
 * `lower` with each stat asked once (by target and versioning) for as long as this view is used,
 * and none asked below a path it already found missing or a file. The lower is
 * outside the overlay's locks, so an answer from earlier in the same swap or batch is as current
 * as asking again; a batch of new files in new directories (a run's import) then asks the lower
 * about the first of them only.
 */
export function statOnce(lower: FileSystem): FileSystem {
  const seen = new Map<string, Promise<FsInfo | undefined>>();
  // Keys the lower has nothing below: missing, or a file (a link is left to the lower to answer).
  const barren = new Set<string>();
  const belowBarren = (key: string): boolean => {
    for (let dir = posix.dirname(key); ; dir = posix.dirname(dir)) {
      if (barren.has(dir)) return true;
      if (dir === posix.dirname(dir)) return false;
    }
  };
  const stat: FileSystem['stat'] = (target, options) => {
    const key = target.targetKey as string;
    const cacheKey = `${options?.versioned === false ? 'u' : 'v'}${key}`;
    let info = seen.get(cacheKey);
    if (info === undefined) {
      info = belowBarren(key) ? Promise.resolve(undefined) : lower.stat(target, options);
      seen.set(cacheKey, info);
      info.then(
        (found) => {
          if (found === undefined || found.type === 'file') barren.add(key);
        },
        (err: unknown) => {
          if (isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY')) barren.add(key);
        },
      );
    }
    return info;
  };
  return new Proxy(lower, {
    get: (t, k) => {
      if (k === 'stat') return stat;
      const v: unknown = Reflect.get(t, k, t);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}
