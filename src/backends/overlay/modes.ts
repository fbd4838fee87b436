import { FsError, contentVersion, type FileSystem, type FsOpOptions, type FsTarget } from '../../seam/index.js';
import { WHOLE_FILE, bytesEqual, isHidden, lowerIfSame, lowerStat, type OverlayCore } from './core.js';
import type { UpperEntry, UpperFile } from './state.js';

/** The same upper file with the executable bit set or cleared. */
function withBit(file: UpperFile, executable: boolean): UpperFile {
  const { executable: _old, ...rest } = file;
  return executable ? { ...rest, executable: true } : rest;
}

/**
 * X1 in the overlay: the bit is recorded in the upper (a lower file is copied up with it), and a
 * file whose bytes and bit are the lower's again leaves the upper, so the path shows no change.
 */
export function createOverlaySetExecutable(core: OverlayCore) {
  const { lower, state, lock } = core;
  return (target: FsTarget, executable: boolean, { signal }: FsOpOptions): Promise<void> => {
    const key = target.targetKey;
    const what = `cannot change the mode of "${target.displayPath}"`;
    return lock.run(key, async () => {
      const entry = state.entries.get(key);
      if (entry?.kind === 'file') {
        if ((entry.executable === true) === executable) return;
        const lowerNow = isHidden(state, key) ? undefined : await lowerIfSame(lower, target, entry.bytes, signal);
        const asLower = lowerNow !== undefined && lowerNow.version === entry.base && entry.origin === undefined &&
          bytesEqual(lowerNow.bytes, entry.bytes) && lowerNow.executable === executable;
        await state.apply({ entries: [[key, asLower ? undefined : withBit(entry, executable)]] });
        return;
      }
      if (entry !== undefined || isHidden(state, key)) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      const info = await lowerStat(lower, target, signal);
      if (info?.type !== 'file') throw new FsError(info ? 'FS_NOT_REGULAR_FILE' : 'FS_NOT_FOUND', `${what}: ${info ? 'not a regular file' : 'not found'}`);
      if ((info.executable === true) === executable) return;
      const { bytes, version } = await lower.readBytes(target, { maxBytes: WHOLE_FILE, signal });
      const file: UpperFile = { kind: 'file', bytes, version: contentVersion(bytes), mtimeMs: Date.now(), base: version };
      await state.apply({ entries: [[key, withBit(file, executable)]] });
    });
  };
}

/**
 * After a commit published an upper file in the lower: give the lower file the entry's bit. A
 * written file keeps the mode of the one it replaced, so only a difference is changed.
 */
export async function publishMode(lower: FileSystem, target: FsTarget, entry: UpperEntry, signal: AbortSignal | undefined): Promise<void> {
  if (entry.kind !== 'file') return;
  const want = entry.executable === true;
  // A new file is created without the bit: nothing to clear.
  if (!want && entry.base === undefined && entry.origin === undefined) return;
  const now = await lowerStat(lower, target, signal);
  if (now?.type !== 'file' || (now.executable === true) === want) return;
  if (lower.setExecutable === undefined) throw new FsError('FS_UNSUPPORTED', `cannot commit the mode of "${target.displayPath}": the lower keeps no executable bit`);
  await lower.setExecutable(target, want, { signal });
}
