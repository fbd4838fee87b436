import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { describeConformance, type ConformanceSubject, type OutOfBandHooks, type SetupHooks } from '../../src/conformance/index.js';
import { isFsError } from '../../src/seam/index.js';
import { volumeHooks } from '../conformance/memory-subject.js';

/**
 * For an overlay, "outside the seam" is the lower: another process edits the real files. A change
 * there is seen at once for every path the overlay has not touched. For a path it has touched,
 * the overlay's own copy wins (that is copy-on-write) and the lower's change surfaces as a
 * conflict at commit. The suite's out-of-band rules change files it first wrote through the seam,
 * so these hooks model "the real file changed and the sandbox let go of its copy": discard that
 * path in the overlay, then change the lower.
 */
function overlayHooks(fs: OverlayFileSystem, lower: Required<OutOfBandHooks>): OutOfBandHooks {
  const letGo = async (path: string) => {
    try {
      await fs.discard([path]);
    } catch (err) {
      // Paths outside the overlay's root (the suite's "outside" files) have nothing to let go of.
      if (!isFsError(err, 'FS_OUTSIDE_ROOT')) throw err;
    }
  };
  return {
    async writeBytes(path, bytes, options) {
      await letGo(path);
      await lower.writeBytes(path, bytes, options);
    },
    async remove(path) {
      const below = await lower.readBytes(path);
      await letGo(path);
      if (below !== undefined) await lower.remove(path);
    },
    readBytes: (path) => lower.readBytes(path),
  };
}

const hostHooks: { outOfBand: Required<OutOfBandHooks>; setup: SetupHooks } = {
  outOfBand: {
    async writeBytes(path, bytes, options) {
      const before = options?.keepMtime ? await stat(path).catch(() => undefined) : undefined;
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, bytes);
      if (before) await utimes(path, before.atime, before.mtime);
    },
    remove: (path) => unlink(path),
    async readBytes(path) {
      const buf = await readFile(path).catch(() => undefined);
      return buf === undefined ? undefined : new Uint8Array(buf);
    },
  },
  setup: {
    mkdir: async (path) => void (await mkdir(path, { recursive: true })),
    async symlink(target, path) {
      await mkdir(dirname(path), { recursive: true });
      await symlink(target, path);
    },
    async mkfifo(path) {
      // The directory may so far exist only in the overlay.
      await mkdir(dirname(path), { recursive: true });
      execFileSync('mkfifo', [path]);
    },
  },
};

const hasMkfifo = (() => {
  try {
    execFileSync('mkfifo', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describeConformance('overlay over memory', async (): Promise<ConformanceSubject> => {
  const lower = createMemoryFs({ files: { '/work': null } });
  const fs = await createOverlayFs({ lower });
  const hooks = volumeHooks(lower.provider.volume);
  return { fs, provider: fs.provider, lower, base: '/work', outOfBand: overlayHooks(fs, hooks.outOfBand), setup: hooks.setup, capabilities: { symlinks: true, executable: true, linkCreation: true } };
});

describeConformance('overlay over memory, upper saved in a filesystem', async (): Promise<ConformanceSubject> => {
  const lower = createMemoryFs({ files: { '/work': null } });
  const fs = await createOverlayFs({ lower, upper: createMemoryFs() });
  const hooks = volumeHooks(lower.provider.volume);
  return { fs, provider: fs.provider, lower, base: '/work', outOfBand: overlayHooks(fs, hooks.outOfBand), setup: hooks.setup, capabilities: { symlinks: true, executable: true, linkCreation: true } };
});

describeConformance('overlay over local', async (): Promise<ConformanceSubject> => {
  const area = await realpath(await mkdtemp(join(tmpdir(), 'dsh-fs-overlay-')));
  const root = join(area, 'root');
  const outsideDir = join(area, 'outside');
  await mkdir(join(root, 'work'), { recursive: true });
  await mkdir(outsideDir);
  const lower = createLocalFs({ root });
  const fs = await createOverlayFs({ lower });
  const setup: SetupHooks = hasMkfifo ? hostHooks.setup : { mkdir: hostHooks.setup.mkdir!, symlink: hostHooks.setup.symlink! };
  return {
    fs,
    provider: fs.provider,
    lower,
    base: join(root, 'work'),
    outsideDir,
    outOfBand: overlayHooks(fs, hostHooks.outOfBand),
    setup,
    capabilities: { symlinks: true, executable: true, linkCreation: true },
    cleanup: () => rm(area, { recursive: true, force: true }),
  };
});

describeConformance('overlay fork, two levels deep (over memory)', async (): Promise<ConformanceSubject> => {
  const lower = createMemoryFs({ files: { '/work': null, '/other/a.txt': 'a\n' } });
  const root = await createOverlayFs({ lower });
  await root.writeText(await root.resolve('/other/a.txt'), 'root\n');
  const child = await root.fork();
  await child.writeText(await child.resolve('/other/b.txt'), 'child\n');
  const fs = await child.fork();
  // The ancestors go on changing: none of it may show in the fork under test.
  await root.writeText(await root.resolve('/work/from-root.txt'), 'root\n');
  await child.mkdir(await child.resolve('/work/from-child'));
  const hooks = volumeHooks(lower.provider.volume);
  return { fs, provider: fs.provider, lower, base: '/work', outOfBand: overlayHooks(fs, hooks.outOfBand), setup: hooks.setup, capabilities: { symlinks: true, executable: true, linkCreation: true } };
});
