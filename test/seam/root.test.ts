import { describe, expect, it } from 'vitest';
import { MapStore, createMapProvider } from '../../examples/custom-provider/map-provider.js';
import { RULES, runConformance } from '../../src/conformance/index.js';
import { FsError, createFs, type FileSystem, type FsProvider } from '../../src/seam/index.js';
import { mapSubject, opaqueKeys } from '../conformance/opaque.js';

/**
 * The seam keeps the root whatever the provider's key scheme. The provider here keys everything
 * `key:<path>` and has no root check of its own: its rmdir of `/` empties the whole store.
 */
function setup(root?: string) {
  const store = new MapStore();
  store.mkdirp('/data/tree/sub');
  store.put('/data/tree/sub/f.txt', new TextEncoder().encode('kept\n'));
  const calls: string[] = [];
  const inner = opaqueKeys(createMapProvider(store));
  const provider: FsProvider = {
    ...inner,
    ...(root === undefined ? {} : { root }),
    resolve: (path, o) => (calls.push(`resolve ${path}`), inner.resolve(path, o)),
    rmdir: (t, o) => (calls.push(`rmdir ${t.targetKey}`), inner.rmdir(t, o)),
    rename: (f, t, o) => (calls.push(`rename ${f.targetKey} ${t.targetKey}`), inner.rename(f, t, o)),
    swap: (t, o) => (calls.push(`swap ${t.targetKey}`), inner.swap(t, o)),
  };
  return { store, calls, provider, fs: createFs(provider) };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (err) {
    return err instanceof FsError ? err.code : `non-FsError: ${String(err)}`;
  }
}

async function attempts(fs: FileSystem, rootPath: string) {
  const root = await fs.resolve(rootPath);
  const file = await fs.resolve('/data/tree/sub/f.txt');
  const empty = await fs.resolve('/data/empty');
  await fs.mkdir(empty);
  return {
    'rmdir recursive': await codeOf(fs.rmdir(root, { recursive: true })),
    rmdir: await codeOf(fs.rmdir(root)),
    remove: await codeOf(fs.remove(root)),
    'rename away': await codeOf(fs.rename(root, await fs.resolve('/data/moved'))),
    'rename a file onto it': await codeOf(fs.rename(file, root, { replace: true })),
    'rename a directory onto it': await codeOf(fs.rename(empty, root, { replace: true })),
  };
}

const refused = {
  'rmdir recursive': 'FS_INVALID_ARGUMENT',
  rmdir: 'FS_INVALID_ARGUMENT',
  remove: 'FS_INVALID_ARGUMENT',
  'rename away': 'FS_INVALID_ARGUMENT',
  'rename a file onto it': 'FS_INVALID_ARGUMENT',
  'rename a directory onto it': 'FS_INVALID_ARGUMENT',
};

describe('the seam never removes, moves or replaces the root, whatever the key scheme', () => {
  it('refuses every removal and move of the root of a provider whose keys are not paths, which never sees them', async () => {
    const { store, calls, fs } = setup();
    expect(await attempts(fs, '/')).toEqual(refused);
    expect(calls.filter((c) => !c.startsWith('resolve'))).toEqual([]);
    expect(store.files.get('/data/tree/sub/f.txt')).toBeDefined();
    expect([...store.dirs].sort()).toEqual(['/', '/data', '/data/empty', '/data/tree', '/data/tree/sub']);
  });

  it('knows a rooted provider by its root, and still removes what lies below it', async () => {
    const { store, fs } = setup('/data');
    expect(await attempts(fs, '/data')).toEqual(refused);
    expect(store.files.get('/data/tree/sub/f.txt')).toBeDefined();
    await fs.rmdir(await fs.resolve('/data/tree'), { recursive: true });
    expect([...store.dirs].sort()).toEqual(['/', '/data', '/data/empty']);
  });

  it('asks the provider for the root once, and does not remember a failed lookup', async () => {
    const { calls, provider } = setup();
    let fail = true;
    const fs = createFs({
      ...provider,
      resolve: (path, o) => {
        if (path === '/' && fail) {
          fail = false;
          return Promise.reject(new FsError('FS_IO_ERROR', 'the store is not reachable'));
        }
        return provider.resolve(path, o);
      },
    });
    const root = { targetKey: 'key:/', displayPath: '/' } as Parameters<FileSystem['rmdir']>[0];
    expect(await codeOf(fs.rmdir(root, { recursive: true }))).toBe('FS_IO_ERROR');
    for (let i = 0; i < 3; i++) expect(await codeOf(fs.rmdir(root, { recursive: true }))).toBe('FS_INVALID_ARGUMENT');
    expect(calls.filter((c) => c === 'resolve /')).toHaveLength(1);
    expect(calls.filter((c) => !c.startsWith('resolve'))).toEqual([]);
  });

  it('passes D5 with that provider', async () => {
    const results = await runConformance(() => mapSubject(opaqueKeys), { skip: RULES.map((r) => r.id).filter((id) => id !== 'D5') });
    expect(results.find((r) => r.id === 'D5')).toMatchObject({ status: 'pass' });
  });
});
