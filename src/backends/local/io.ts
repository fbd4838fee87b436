import { constants as bufferConstants } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';
import type { FsVersion } from '../../seam/types.js';
import { contentHasher } from '../../seam/version.js';

const CHUNK = 256 * 1024;

/** Largest buffer this Node can allocate; a file beyond it cannot be held in memory at all. */
export const MAX_BUFFER = bufferConstants.MAX_LENGTH;

/**
 * Reads from the start to end of file, but never more than `maxBytes + 1` bytes, and
 * never trusting the size fstat reports (procfs files say 0, a growing file says too little).
 * Returns undefined when the file holds more than `maxBytes`.
 */
export async function readBounded(handle: FileHandle, maxBytes: number, sizeHint: number): Promise<Uint8Array | undefined> {
  const limit = Math.min(maxBytes, MAX_BUFFER - 1) + 1;
  let buf = Buffer.allocUnsafe(Math.max(1, Math.min(limit, sizeHint + 1, 64 * 1024 * 1024)));
  let total = 0;
  for (;;) {
    if (total === buf.byteLength) {
      if (total >= limit) break;
      const bigger = Buffer.allocUnsafe(Math.min(limit, Math.max(total * 2, CHUNK)));
      buf.copy(bigger, 0, 0, total);
      buf = bigger;
    }
    const { bytesRead } = await handle.read(buf, total, buf.byteLength - total, total);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  if (total > maxBytes) return undefined;
  // Hand back an exact-size copy when the slack is large, so callers do not pin a big buffer.
  const out = total < buf.byteLength / 2 ? Buffer.from(buf.subarray(0, total)) : buf.subarray(0, total);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/**
 * Hashes a file from the start to end of file without holding it in memory. Stops and
 * returns undefined once more than `maxBytes` were read (a file that keeps growing).
 */
export async function hashBounded(handle: FileHandle, maxBytes: number): Promise<{ version: FsVersion; size: number } | undefined> {
  const hasher = contentHasher();
  const buf = Buffer.allocUnsafe(CHUNK);
  let total = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buf, 0, CHUNK, total);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > maxBytes) return undefined;
    hasher.update(buf.subarray(0, bytesRead));
  }
  return { version: hasher.digest(), size: total };
}
