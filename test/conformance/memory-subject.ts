import { posix } from 'node:path';
import type { Volume } from 'memfs';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import type { ConformanceCapabilities, ConformanceSubject, OutOfBandHooks, SetupHooks } from '../../src/conformance/index.js';

/** Out-of-band and setup hooks that act on a memfs Volume directly, behind the seam's back. */
export function volumeHooks(vol: Volume): {
  outOfBand: Required<OutOfBandHooks>;
  setup: SetupHooks;
  capabilities: ConformanceCapabilities;
} {
  const lstat = (path: string) => {
    try {
      return vol.lstatSync(path);
    } catch {
      return undefined;
    }
  };
  return {
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
        const st = lstat(path);
        return st?.isFile() ? new Uint8Array(vol.readFileSync(path) as Buffer) : undefined;
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
    capabilities: { symlinks: true, executable: true, linkCreation: true },
  };
}

/** The memory provider as a conformance subject. */
export function memorySubject(): ConformanceSubject {
  const fs = createMemoryFs({ files: { '/work': null } });
  return { fs, provider: fs.provider, base: '/work', ...volumeHooks(fs.provider.volume) };
}
