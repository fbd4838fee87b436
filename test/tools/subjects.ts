import { mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { type FileSystem } from '../../src/index.js';
import { isFsError } from '../../src/seam/errors.js';

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
  /** Create a symlink at `path` whose text is `target`, where the provider supports them. */
  symlink?(target: string, path: string): Promise<void>;
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
      async symlink(target, path) {
        vol.symlinkSync(target, path);
      },
      async read(path) {
        const buf = safe(() => vol.readFileSync(path) as Buffer);
        return buf === undefined ? undefined : new Uint8Array(buf);
      },
    };
  },
};

export const localSubject: SubjectFactory = {
  name: 'local',
  async create() {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'dsh-fs-tools-')));
    const fs = createLocalFs({ root });
    return {
      fs,
      base: root,
      async write(path, content, options) {
        const before = options?.keepMtime ? await stat(path).catch(() => undefined) : undefined;
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, bytesOf(content));
        if (before) await utimes(path, before.atime, before.mtime);
      },
      remove: (path) => unlink(path),
      symlink: (target, path) => symlink(target, path),
      async read(path) {
        const buf = await readFile(path).catch(() => undefined);
        return buf === undefined ? undefined : new Uint8Array(buf);
      },
      cleanup: () => rm(root, { recursive: true, force: true }),
    };
  },
};

/**
 * Copy-on-write over a memory lower. The other writer works on the overlay view (as a second
 * harness sharing the sandbox would), so its changes are seen whether or not a file was copied up.
 */
export const overlaySubject: SubjectFactory = {
  name: 'overlay',
  async create() {
    const lower = createMemoryFs({ cwd: '/work' });
    const fs = await createOverlayFs({ lower, cwd: '/work' });
    return {
      fs,
      base: '/work',
      async write(path, content) {
        await fs.writeBytes(await fs.resolve(path), bytesOf(content));
      },
      async remove(path) {
        await fs.remove(await fs.resolve(path));
      },
      async symlink(target, path) {
        lower.provider.volume.symlinkSync(target, path);
      },
      async read(path) {
        try {
          return (await fs.readBytes(await fs.resolve(path), { maxBytes: 1 << 20 })).bytes;
        } catch (err) {
          if (isFsError(err, 'FS_NOT_FOUND')) return undefined;
          throw err;
        }
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
