import { hash } from 'node:crypto';
import { FsVersion } from './types.js';

/**
 * V1/V2: a version derived from the bytes alone, so identical bytes keep their version and any
 * change of bytes changes it, whatever the timestamps say.
 */
export function contentVersion(bytes: Uint8Array): FsVersion {
  return FsVersion(`sha256:${hash('sha256', bytes, 'base64url')}`);
}
