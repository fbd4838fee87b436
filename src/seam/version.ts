import { createHash, hash } from 'node:crypto';
import { FsVersion } from './types.js';
import { compareNames } from './resolve.js';

/**
 * V1/V2: a version derived from the bytes alone, so identical bytes keep their version and any
 * change of bytes changes it, whatever the timestamps say.
 */
export function contentVersion(bytes: Uint8Array): FsVersion {
  return FsVersion(`sha256:${hash('sha256', bytes, 'base64url')}`);
}

export interface ContentHasher {
  update(chunk: Uint8Array): void;
  /** The same version `contentVersion` gives for the concatenation of every chunk. */
  digest(): FsVersion;
}

/** Incremental `contentVersion`, so a provider can version a large file without holding it in memory. */
export function contentHasher(): ContentHasher {
  const h = createHash('sha256');
  return {
    update: (chunk) => void h.update(chunk),
    digest: () => FsVersion(`sha256:${h.digest('base64url')}`),
  };
}

/** The version of a directory, from its entries' names: it changes when an entry is added, removed or renamed. */
export function directoryVersion(names: readonly string[]): FsVersion {
  const sorted = [...names].sort(compareNames);
  return FsVersion(`dir:${contentVersion(Buffer.from(sorted.join('\0')))}`);
}
