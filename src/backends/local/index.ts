import { createFs } from '../../seam/fs.js';
import type { FsQuota } from '../../seam/quota.js';
import type { FileSystem } from '../../seam/types.js';
import { createLocalProvider, type LocalProvider, type LocalProviderOptions, type SweepOptions } from './provider.js';

export {
  createLocalProvider,
  TEMP_NAME_PATTERN,
  type LocalProvider,
  type LocalProviderOptions,
  type SweepOptions,
} from './provider.js';
export { type AnchorMode } from './anchor.js';
export {
  isRacilyClean,
  type StatTuple,
} from './version-cache.js';

export interface LocalFsOptions extends LocalProviderOptions, FsQuota {
  /** Largest file readText/streamText/editText will load, in bytes (default 256 MiB). */
  readonly maxTextBytes?: number;
}

export interface LocalFileSystem extends FileSystem {
  /** The canonical (realpath) root; every path the filesystem accepts lies beneath it. */
  readonly root: string;
  readonly provider: LocalProvider;
  /** Removes this provider's own stale temp files under the root (see LocalProvider.sweepTemps). */
  sweepTemps(options?: SweepOptions): Promise<string[]>;
}

/** A filesystem on local disk, confined to `root`, with atomic durable writes and content versions. */
export function createLocalFs(options: LocalFsOptions): LocalFileSystem {
  const provider = createLocalProvider(options);
  const { maxTextBytes, maxBytes, maxFiles } = options;
  const fs = createFs(provider, {
    ...(maxTextBytes === undefined ? {} : { maxTextBytes }),
    ...(maxBytes === undefined ? {} : { maxBytes }),
    ...(maxFiles === undefined ? {} : { maxFiles }),
  });
  return Object.assign(fs, {
    root: provider.root,
    provider,
    sweepTemps: (sweep?: SweepOptions) => provider.sweepTemps(sweep),
  });
}
