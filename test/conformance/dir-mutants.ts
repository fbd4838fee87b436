import { type MemoryProvider } from '../../src/backends/memory/index.js';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import type { ConformanceSubject } from '../../src/conformance/index.js';
import {
  FsError,
  checkRmdir,
  createFs,
  depthFirst,
  isRealSubdirectory,
  type FileSystem,
  type FsProvider,
  type FsTarget,
  type FsWalkEntry,
} from '../../src/seam/index.js';
import { volumeHooks } from './memory-subject.js';
import type { Mutant } from './mutants.js';
import { mapSubject, opaqueKeys } from './opaque.js';

/**
 * Mutants of the directory and walk rules D5–D9. Each passes every other rule: the mutant test
 * requires its named rule, and only it, to fail.
 */

function memorySubject(wrap: (base: MemoryProvider) => FsProvider): ConformanceSubject {
  const base = createMemoryProvider({ files: { '/work': null } });
  // Without memory's own `modify`: every write then goes through the mutant's swap.
  const { modify: _modify, ...swapOnly } = base;
  const provider = wrap(swapOnly);
  return { fs: createFs(provider), provider, base: '/work', ...volumeHooks(base.volume) };
}

const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A FileSystem over the seam's that sends a recursive rmdir straight to its store, in one call,
 * guarding the root as the seam once did: by comparing the target's key with the root's path. Its
 * keys are not paths, so the root's key never matches, and the store deletes what it is asked to.
 */
function nativeRecursiveRmdir(fs: FileSystem, provider: FsProvider): FileSystem {
  return {
    ...fs,
    async rmdir(target, options) {
      if (options?.recursive !== true || target.targetKey === (fs.root ?? '/')) return fs.rmdir(target, options);
      return provider.rmdir(target, { recursive: true, ...(options.signal ? { signal: options.signal } : {}) });
    },
  };
}

/**
 * A FileSystem over the seam's that removes a tree bottom-up through the contract, as an adapter
 * for a store without a recursive delete would: everything below is gone before the seam refuses
 * to remove the directory itself.
 */
function bottomUpRmdir(fs: FileSystem): FileSystem {
  const empty = async (dir: FsTarget): Promise<void> => {
    for (const entry of await fs.listDir(dir)) {
      if (isRealSubdirectory(dir, entry)) {
        await empty(entry.target);
        await fs.rmdir(entry.target);
      } else await fs.remove(entry.target);
    }
  };
  return {
    ...fs,
    async rmdir(target, options) {
      if (options?.recursive === true) await empty(target);
      return fs.rmdir(target, { ...options, recursive: false });
    },
  };
}

export const dirMutants: readonly Mutant[] = [
  {
    name: 'its own key scheme, and a recursive rmdir sent to the store past the seam, guarding the root by its path',
    rule: 'D5',
    only: true,
    subject: () => mapSubject(opaqueKeys, nativeRecursiveRmdir),
  },
  {
    name: 'a recursive rmdir emulated bottom-up through the contract: everything below goes before the root is refused',
    rule: 'D5',
    only: true,
    subject: () => {
      const subject = memorySubject((base) => base);
      return { ...subject, fs: bottomUpRmdir(subject.fs) };
    },
  },
  {
    name: 'a recursive rmdir removes the files below and the directory, but not the directories below',
    rule: 'D6',
    only: true,
    subject: () =>
      mapSubject((base, store) => ({
        ...base,
        async rmdir(target, options) {
          if (!options.recursive) return base.rmdir(target, options);
          const dir = target.targetKey;
          const what = `cannot remove directory "${target.displayPath}"`;
          if (store.files.has(dir)) throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
          if (!store.dirs.has(dir)) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
          for (const p of store.below(dir)) store.files.delete(p);
          store.dirs.delete(dir);
        },
      })),
  },
  {
    name: 'a non-recursive rmdir checks that the directory is empty, yields, then removes it with whatever landed in it',
    rule: 'D7',
    only: true,
    subject: () =>
      memorySubject((base) => ({
        ...base,
        async rmdir(target, options) {
          if (options.recursive) return base.rmdir(target, options);
          checkRmdir(`cannot remove directory "${target.displayPath}"`, (await base.listDir(target, options)).length, false);
          await nextMacrotask();
          return base.rmdir(target, { ...options, recursive: true });
        },
      })),
  },
  {
    name: 'walk ignores prune: it lists pruned directories, and fails on one that is gone',
    rule: 'D8',
    only: true,
    subject: () =>
      memorySubject((base) => ({
        ...base,
        walk: (target, { signal, onUnreadable }) => depthFirst(target, (dir) => base.listDir(dir, { signal }), onUnreadable ? { onUnreadable } : {}),
      })),
  },
  {
    name: 'walk keeps the entries of its first walk of a directory and gives them again',
    rule: 'D9',
    only: true,
    subject: () =>
      memorySubject((base) => {
        const cache = new Map<string, FsWalkEntry[]>();
        const walk = base.walk!.bind(base);
        return {
          ...base,
          async *walk(target, options) {
            // Only plain walks are kept: a pruned one depends on its caller.
            if (options.prune) return yield* walk(target, options);
            let entries = cache.get(target.targetKey);
            if (entries === undefined) {
              entries = [];
              for await (const entry of walk(target, options)) entries.push(entry);
              cache.set(target.targetKey, entries);
            }
            yield* entries;
          },
        };
      }),
  },
];
