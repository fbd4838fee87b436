import { createFs, type FileSystem } from '../../seam/index.js';
import { createMemoryProvider, type MemoryFsOptions, type MemoryProvider, type MemorySnapshot } from './provider.js';

export type { MemoryEntry, MemoryFsOptions, MemoryProvider, MemorySnapshot, MemoryTree } from './provider.js';

export interface MemoryFileSystem extends FileSystem {
  readonly provider: MemoryProvider;
  snapshot(): MemorySnapshot;
  restore(snapshot: MemorySnapshot): void;
}

/** An in-memory filesystem on memfs: one Volume per instance, content-digest versions. */
export function createMemoryFs(options: MemoryFsOptions = {}): MemoryFileSystem {
  const provider = createMemoryProvider(options);
  const fs = createFs(provider, options);
  return Object.assign(fs, {
    provider,
    snapshot: () => provider.snapshot(),
    restore: (s: MemorySnapshot) => provider.restore(s),
  });
}

