import { posix } from 'node:path';
import type { Volume } from 'memfs';
import {
  FsError,
  contentVersion,
  expectHolds,
  isExecutableMode,
  observe,
  withExecutable,
  type FsBatchResult,
  type FsBatchSwap,
  type FsCurrent,
  type FsVersion,
} from '../../seam/index.js';

export interface MemoryBatchStore {
  readonly vol: Volume;
  /** The regular file at a key, or undefined; anything else throws. */
  current(key: string, what: string): FsCurrent | undefined;
  mkdirs(key: string, what: string): void;
}

/**
 * B1 in memory: every expectation and every new file's parents checked, then every change made,
 * all synchronously, so no other call runs in between and nothing fails half-way.
 */
export function applyMemoryBatch(store: MemoryBatchStore, swaps: readonly FsBatchSwap[]): FsBatchResult {
  const { vol } = store;
  const what = (s: FsBatchSwap) => `cannot ${s.bytes === null ? 'remove' : 'write'} "${s.target.displayPath}"`;
  const befores = swaps.map((s) => store.current(s.target.targetKey, what(s)));
  for (const [index, s] of swaps.entries()) {
    if (!expectHolds(s.expect, befores[index])) return { ok: false, index, current: observe(befores[index]) };
  }
  const removed = new Set(swaps.filter((s, i) => s.bytes === null && befores[i] !== undefined).map((s) => s.target.targetKey as string));
  for (const [i, s] of swaps.entries()) if (s.bytes !== null && befores[i] === undefined) checkParents(vol, s.target.targetKey, removed, what(s));
  // A moved file keeps its executable bit (X1), read before its old name goes.
  const modes = new Map(swaps.flatMap((s) => (s.from === undefined ? [] : [[s.from.targetKey as string, Number(vol.statSync(s.from.targetKey).mode)]])));
  // Removals first: a file this batch removes may stand where another change needs a directory.
  for (const key of removed) vol.unlinkSync(key);
  const versions: (FsVersion | undefined)[] = [];
  for (const [i, s] of swaps.entries()) {
    if (s.bytes === null) {
      versions.push(undefined);
      continue;
    }
    const key = s.target.targetKey;
    if (befores[i] === undefined) store.mkdirs(posix.dirname(key), what(s));
    vol.writeFileSync(key, s.bytes);
    const moved = s.from === undefined ? undefined : modes.get(s.from.targetKey);
    if (moved !== undefined) vol.chmodSync(key, withExecutable(Number(vol.statSync(key).mode) & 0o7777, isExecutableMode(moved)));
    versions.push(contentVersion(s.bytes));
  }
  return { ok: true, versions };
}

/** The parents a new file needs can be made: nothing but a file this batch removes stands in their way. */
function checkParents(vol: Volume, key: string, removed: ReadonlySet<string>, what: string): void {
  for (let dir = posix.dirname(key); dir !== '/'; dir = posix.dirname(dir)) {
    let st: { isDirectory(): boolean };
    try {
      st = vol.statSync(dir) as { isDirectory(): boolean };
    } catch {
      continue;
    }
    if (st.isDirectory()) return;
    if (!removed.has(dir)) throw new FsError('FS_NOT_DIRECTORY', `${what}: "${dir}" is not a directory`);
  }
}
