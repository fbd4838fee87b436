import { posix } from 'node:path';
import { createMemoryFs, type MemoryFileSystem } from '../../src/backends/memory/index.js';
import type { ConformanceSubject } from '../../src/conformance/index.js';

/** The memory provider as a conformance subject; out-of-band changes go straight to its Volume. */
export function memorySubject(fs: MemoryFileSystem = createMemoryFs({ files: { '/work': null } }), base = '/work'): ConformanceSubject {
  const vol = fs.provider.volume;
  const lstat = (path: string) => {
    try {
      return vol.lstatSync(path);
    } catch {
      return undefined;
    }
  };
  return {
    fs,
    base,
    outOfBand: {
      async writeBytes(path, bytes, options) {
        vol.mkdirSync(posix.dirname(path), { recursive: true });
        const before = options?.keepMtime ? lstat(path) : undefined;
        vol.writeFileSync(path, Buffer.from(bytes));
        if (before) vol.utimesSync(path, before.atime, before.mtime);
      },
      async remove(path) {
        vol.unlinkSync(path);
      },
      async readBytes(path) {
        if (!lstat(path)) return undefined;
        return new Uint8Array(vol.readFileSync(path) as Buffer);
      },
    },
    setup: {
      async mkdir(path) {
        vol.mkdirSync(path, { recursive: true });
      },
      async symlink(target, path) {
        vol.mkdirSync(posix.dirname(path), { recursive: true });
        vol.symlinkSync(target, path);
      },
    },
    capabilities: { symlinks: true },
  };
}
