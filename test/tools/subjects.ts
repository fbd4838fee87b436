import { createMemoryFs } from '../../src/backends/memory/index.js';
import type { FileSystem } from '../../src/index.js';

/** A provider under test, plus a way to change files behind its back. */
export interface ToolSubject {
  readonly fs: FileSystem;
  /** Absolute directory (inside any root) where the tests put their files. */
  readonly base: string;
  /** Another writer: writes exact bytes, optionally restoring the old mtime (same tick). */
  write(path: string, content: string | Uint8Array, options?: { keepMtime?: boolean }): Promise<void>;
  remove(path: string): Promise<void>;
  /** The bytes stored at `path`, or undefined when absent. */
  read(path: string): Promise<Uint8Array | undefined>;
  cleanup?(): Promise<void>;
}

export interface SubjectFactory {
  readonly name: string;
  create(): Promise<ToolSubject>;
}

const bytesOf = (content: string | Uint8Array) => (typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content));

export const memorySubject: SubjectFactory = {
  name: 'memory',
  async create() {
    const fs = createMemoryFs({ cwd: '/work' });
    const vol = fs.provider.volume;
    return {
      fs,
      base: '/work',
      async write(path, content, options) {
        const before = options?.keepMtime ? safe(() => vol.statSync(path)) : undefined;
        vol.mkdirSync(path.slice(0, path.lastIndexOf('/')) || '/', { recursive: true });
        vol.writeFileSync(path, bytesOf(content));
        if (before) vol.utimesSync(path, before.atime, before.mtime);
      },
      async remove(path) {
        vol.unlinkSync(path);
      },
      async read(path) {
        const buf = safe(() => vol.readFileSync(path) as Buffer);
        return buf === undefined ? undefined : new Uint8Array(buf);
      },
    };
  },
};

function safe<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}
