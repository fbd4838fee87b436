import { posix } from 'node:path';
import type { ConformanceSubject } from '../../src/conformance/index.js';
import { createStoreFs, type FsStore, type StoreEntry, type StoreTx } from '../../src/store/index.js';
import { createMapStore } from '../../examples/map-store.js';
import type { Mutant } from './mutants.js';

const BASE = '/work';

/** The kit's subject over a store: a second filesystem on the same store makes the out-of-band changes. */
export function storeSubject(store: FsStore): ConformanceSubject {
  const fs = createStoreFs(store);
  const other = createStoreFs(store);
  const at = (path: string) => other.resolve(path);
  return {
    fs,
    provider: fs.provider,
    base: BASE,
    outOfBand: {
      writeBytes: async (path, bytes) => void (await other.writeBytes(await at(path), bytes)),
      remove: async (path) => other.remove(await at(path)),
    },
    setup: { mkdir: async (path) => other.mkdir(await at(path)) },
  };
}

const seeded = () => new Map<string, StoreEntry>([[BASE, { kind: 'directory' }]]);

/** The map store with each transaction's operations passed through `wrap`. */
function wrapped(wrap: (tx: StoreTx) => StoreTx): FsStore {
  const store = createMapStore(seeded());
  return { transaction: (body, options) => store.transaction((tx) => body(wrap(tx)), options) };
}

/** A store whose transactions run side by side with no isolation (and no rollback). */
function unisolated(): FsStore {
  const entries = seeded();
  const tx: StoreTx = {
    get: async (key) => entries.get(key),
    put: async (key, entry) => void entries.set(key, entry),
    delete: async (key) => void entries.delete(key),
    list: async (dir) => ({
      children: [...entries].filter(([k]) => k !== '/' && posix.dirname(k) === dir).map(([k, e]) => ({ name: posix.basename(k), ...e })),
    }),
  };
  return { transaction: (body) => body(tx) };
}

/** Lists `size` children per page, as a database store does: each mutant below breaks one thing of it. */
export function pagedStore(size: number, lose = false): FsStore {
  return wrapped((tx) => ({
    ...tx,
    async list(dir, next) {
      const all = [...(await tx.list(dir)).children].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const from = next === undefined ? 0 : Number(next);
      const end = from + size;
      // `lose`: the page before the last says there is no more.
      const more = lose ? end + size < all.length : end < all.length;
      return { children: all.slice(from, end), ...(more ? { next: String(end) } : {}) };
    },
  }));
}

/** Store-tier bugs: a store that breaks its side of the contract, caught through the filesystem over it. */
export const storeMutants: readonly Mutant[] = [
  {
    name: 'store tier: transactions are not isolated from each other',
    rule: 'G6',
    subject: () => storeSubject(unisolated()),
  },
  {
    name: 'store tier: a paged list never returns its last page',
    rule: 'M1',
    subject: () => storeSubject(pagedStore(2, true)),
  },
  {
    name: 'store tier: put keeps the version a file had',
    rule: 'V1',
    subject: () =>
      storeSubject(
        wrapped((tx) => ({
          ...tx,
          async put(key, entry) {
            const old = await tx.get(key);
            await tx.put(key, entry.kind === 'file' && old?.kind === 'file' ? { ...entry, version: old.version } : entry);
          },
        })),
      ),
  },
];
