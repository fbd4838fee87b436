/**
 * A whole filesystem over a Map, on the store tier: the store only keeps entries and runs
 * transactions; files, directories, links, rename, compare-and-swap and walking come from
 * `createStoreFs`. A database with transactions fits the same five methods.
 */
import { posix } from 'node:path';
import { createStoreFs, type FsStore, type StoreEntry, type StoreTx } from 'dsh-fs/store';

export function createMapStore(entries = new Map<string, StoreEntry>()): FsStore {
  // Transactions run one at a time: that is all the isolation a Map in one process needs.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    transaction<T>(body: (tx: StoreTx) => Promise<T>): Promise<T> {
      const run = queue.then(async () => {
        const undo = new Map<string, StoreEntry | undefined>();
        const keep = (key: string) => undo.has(key) || undo.set(key, entries.get(key));
        try {
          return await body({
            get: async (key) => entries.get(key),
            async put(key, entry) {
              keep(key);
              entries.set(key, entry);
            },
            async delete(key) {
              keep(key);
              entries.delete(key);
            },
            list: async (dir) => ({
              children: [...entries]
                .filter(([key]) => key !== '/' && posix.dirname(key) === dir)
                .map(([key, entry]) => ({ name: posix.basename(key), ...entry })),
            }),
          });
        } catch (err) {
          // A failed transaction leaves nothing behind.
          for (const [key, entry] of undo) entry === undefined ? entries.delete(key) : entries.set(key, entry);
          throw err;
        }
      });
      queue = run.catch(() => undefined);
      return run;
    },
  };
}

export const createMapFs = (entries?: Map<string, StoreEntry>) => createStoreFs(createMapStore(entries));
