import { isFsError, type FileSystem, type FsCurrent, type FsTarget, type FsVersion } from '../../seam/index.js';
import { textProblem } from '../../seam/text.js';

/**
 * The largest lower file whose bytes a first copy-up keeps as its base (UpperFile.baseBytes), so
 * that sync can merge the folder's later changes three ways. Larger or non-text files keep only
 * their base version, and sync reports them as conflicts when both sides changed.
 */
export const BASE_BYTES_MAX = 256 * 1024;

/**
 * The lower's bytes at the version the copy-up records, when they are text of at most
 * BASE_BYTES_MAX: those already read (same size as the new bytes), else one read of the file.
 */
export async function baseContent(
  lower: FileSystem,
  target: FsTarget,
  info: { readonly type: string; readonly size?: number; readonly version?: FsVersion } | undefined,
  read: FsCurrent | undefined,
  signal: AbortSignal | undefined,
): Promise<Uint8Array | undefined> {
  if (info?.type !== 'file' || (info.size !== undefined && info.size > BASE_BYTES_MAX)) return undefined;
  let current: FsCurrent | undefined = read;
  if (current === undefined || current.version !== info.version) {
    try {
      current = await lower.readBytes(target, { maxBytes: BASE_BYTES_MAX, signal });
    } catch (err) {
      if (isFsError(err, 'FS_ABORTED')) throw err;
      return undefined;
    }
  }
  // Read after the stat: a file that changed meanwhile keeps no base bytes (its version would not match).
  if (current.version !== info.version || textProblem(current.bytes) !== undefined) return undefined;
  return current.bytes;
}
