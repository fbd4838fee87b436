import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openDirStore } from '../../src/backends/overlay/store.js';
import { crashAfter, describeUpperStoreKit } from './store-kit.js';
import { crashingStore, memoryDisk } from './stores.js';

// A memory "disk" whose crashes tear appends exactly as a crash mid-write leaves a file.
describeUpperStoreKit('memory disk', {
  async fresh() {
    const disk = memoryDisk();
    return { open: async () => crashingStore(disk), crashing: async (crashAt, tear) => crashingStore(disk, crashAt, tear) };
  },
});

const bases: string[] = [];
afterAll(async () => {
  for (const b of bases) await rm(b, { recursive: true, force: true });
});
let n = 0;

// A host directory (the stateDir option): fsyncs make it the slowest, so it runs a quarter as often.
describeUpperStoreKit('state directory', {
  runsFactor: 0.25,
  async fresh() {
    if (bases.length === 0) bases.push(await mkdtemp(join(tmpdir(), 'dsh-overlay-kit-')));
    const dir = join(bases[0]!, String(n++));
    return { open: () => openDirStore(dir), crashing: async (crashAt, tear) => crashAfter(await openDirStore(dir), crashAt, tear) };
  },
});
