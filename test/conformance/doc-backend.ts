import { posix } from 'node:path';
import { type MemoryProvider } from '../../src/backends/memory/index.js';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import type { FsProvider } from '../../src/seam/index.js';

/**
 * The backend that docs/conformance.md's example imports as `./my-backend.js`, with the calls it
 * makes: a store (here a memory provider's volume) and a provider over it.
 */
export class MyStore {
  destroyed = false;

  private constructor(readonly provider: MemoryProvider) {}

  static async open(): Promise<MyStore> {
    return new MyStore(createMemoryProvider());
  }

  private get vol() {
    return this.provider.volume;
  }

  async mkdir(path: string): Promise<void> {
    this.vol.mkdirSync(path, { recursive: true });
  }

  async put(path: string, bytes: Uint8Array, options?: { readonly keepMtime?: boolean }): Promise<void> {
    this.vol.mkdirSync(posix.dirname(path), { recursive: true });
    const before = options?.keepMtime ? this.lstat(path) : undefined;
    this.vol.writeFileSync(path, Buffer.from(bytes));
    if (before) this.vol.utimesSync(path, before.atime, before.mtime);
  }

  async delete(path: string): Promise<void> {
    this.vol.unlinkSync(path);
  }

  async get(path: string): Promise<Uint8Array | undefined> {
    return this.lstat(path)?.isFile() ? new Uint8Array(this.vol.readFileSync(path) as Buffer) : undefined;
  }

  async link(target: string, path: string): Promise<void> {
    this.vol.mkdirSync(posix.dirname(path), { recursive: true });
    this.vol.symlinkSync(target, path);
  }

  async destroy(): Promise<void> {
    this.vol.reset();
    this.destroyed = true;
  }

  private lstat(path: string) {
    try {
      return this.vol.lstatSync(path);
    } catch {
      return undefined;
    }
  }
}

export function createMyProvider(store: MyStore): FsProvider {
  return store.provider;
}
