import { MapStore, createMapProvider } from '../../examples/custom-provider/map-provider.js';
import type { ConformanceSubject } from '../../src/conformance/index.js';
import { FsTargetKey, createFs, isWithin, type FileSystem, type FsDirEntry, type FsProvider, type FsTarget } from '../../src/seam/index.js';

const PREFIX = 'key:';

/**
 * `base` under a key scheme of its own: every key is `key:` and the base's key, as a store keyed by
 * a prefix, a row or a handle would have it. Nothing else changes, so the only thing a key scheme
 * can break is a check that takes keys for paths.
 */
export function opaqueKeys(base: FsProvider): FsProvider {
  const inner = (t: FsTarget): FsTarget => {
    if (!t.targetKey.startsWith(PREFIX)) throw new Error(`not a key of this provider: ${t.targetKey}`);
    return { targetKey: FsTargetKey(t.targetKey.slice(PREFIX.length)), displayPath: t.displayPath };
  };
  const outer = (t: FsTarget): FsTarget => ({ targetKey: FsTargetKey(PREFIX + t.targetKey), displayPath: t.displayPath });
  const entry = <E extends FsDirEntry>(e: E): E => ({ ...e, target: outer(e.target) });
  return {
    ...(base.root === undefined ? {} : { root: base.root }),
    ...(base.cwd === undefined ? {} : { cwd: base.cwd }),
    resolve: async (path, o) => outer(await base.resolve(path, o)),
    contains: (parent, child) => isWithin(inner(parent).targetKey, inner(child).targetKey),
    stat: (t, o) => base.stat(inner(t), o),
    read: (t, o) => base.read(inner(t), o),
    swap: (t, o) => base.swap(inner(t), o),
    listDir: async (t, o) => (await base.listDir(inner(t), o)).map(entry),
    mkdir: (t, o) => base.mkdir(inner(t), o),
    rmdir: (t, o) => base.rmdir(inner(t), o),
    rename: (from, to, o) => base.rename(inner(from), inner(to), o),
  };
}

/** The example map provider behind `wrap`, with the hooks its own conformance test gives. */
export function mapSubject(wrap: (provider: FsProvider, store: MapStore) => FsProvider = (p) => p, shape: (fs: FileSystem, provider: FsProvider) => FileSystem = (fs) => fs): ConformanceSubject {
  const store = new MapStore();
  store.mkdirp('/data');
  const provider = wrap(createMapProvider(store), store);
  return {
    fs: shape(createFs(provider), provider),
    provider,
    base: '/data',
    outOfBand: {
      async writeBytes(path, bytes) {
        store.put(path, bytes);
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
}
