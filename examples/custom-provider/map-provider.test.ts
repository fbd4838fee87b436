import { describeConformance } from 'dsh-fs/conformance';
import { createMapFs } from './map-provider.js';

describeConformance('map provider (example)', () => {
  const { fs, provider, store } = createMapFs();
  store.mkdirp('/data');
  return {
    fs,
    provider, // lets the suite check its swap directly (G7) and as if from many processes
    base: '/data',
    // Changes behind the seam's back, as another process would make them.
    outOfBand: {
      async writeBytes(path, bytes) {
        store.put(path, bytes); // no mtime to keep: versions come from the bytes alone
      },
      async remove(path) {
        store.files.delete(path);
      },
      async readBytes(path) {
        return store.files.get(path);
      },
    },
    setup: {
      async mkdir(path) {
        store.mkdirp(path);
      },
    },
  };
});
