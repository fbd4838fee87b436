import { describeConformance } from 'dsh-fs/conformance';
import { createStoreFs } from 'dsh-fs/store';
import { createMapStore } from './map-store.js';

describeConformance('map store (store tier example)', async () => {
  const store = createMapStore();
  const fs = createStoreFs(store);
  // Another process on the same store, for the changes the suite makes behind the seam's back.
  const other = createStoreFs(store);
  const at = (path: string) => other.resolve(path);
  await fs.mkdir(await fs.resolve('/data'));
  return {
    fs,
    provider: fs.provider,
    base: '/data',
    outOfBand: {
      writeBytes: async (path, bytes) => void (await other.writeBytes(await at(path), bytes)),
      remove: async (path) => other.remove(await at(path)),
      readBytes: async (path) => {
        const target = await at(path);
        return (await other.stat(target))?.type === 'file' ? (await other.readBytes(target, { maxBytes: 1 << 30 })).bytes : undefined;
      },
    },
    setup: {
      mkdir: async (path) => other.mkdir(await at(path)),
      symlink: async (text, path) => other.symlink!(await other.resolve(path, { noFollow: true }), text),
    },
    capabilities: { symlinks: true, linkCreation: true, executable: true },
  };
});
