export { createStoreFs, createStoreProvider, type StoreFsOptions } from './provider.js';
export type { FsStore, StoreChild, StoreEntry, StoreHead, StoreListPage, StoreTx } from './types.js';
