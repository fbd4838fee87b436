import type { FsUsage } from '../../seam/index.js';
import type { UpperEntry, UpperState } from './state.js';

/** A quota counts what the upper holds: a file's bytes, and each file and link as one file. */
function entryUsage(entry: UpperEntry | undefined): FsUsage {
  if (entry?.kind === 'file') return { bytes: entry.bytes.byteLength, files: 1 };
  return { bytes: 0, files: entry?.kind === 'link' ? 1 : 0 };
}

/** What the upper holds at `key` and below it. */
export function upperUsage(state: UpperState, key: string): FsUsage {
  const own = entryUsage(state.entries.get(key));
  if (!state.hasFileBelow(key)) return own;
  const prefix = key === '/' ? '/' : `${key}/`;
  let { bytes, files } = own;
  for (const [k, entry] of state.entries) {
    if (!k.startsWith(prefix)) continue;
    const u = entryUsage(entry);
    bytes += u.bytes;
    files += u.files;
  }
  return { bytes, files };
}
