import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { dirname, join } from 'node:path';
import { createLocalFs } from '../../src/backends/local/index.js';
import { describeConformance, type ConformanceSubject } from '../../src/conformance/index.js';
import { makeArea, writeOutOfBand } from './helpers.js';

/** A fresh temp root (with a sibling directory outside it) per rule, and hooks acting on the disk directly. */
async function localSubject(options: { durable?: boolean; anchoring?: 'proc' | 'inode' } = {}): Promise<ConformanceSubject> {
  const area = await makeArea('conformance');
  const base = join(area.root, 'work');
  await fsp.mkdir(base);
  const fs = createLocalFs({ root: area.root, ...options });
  return {
    fs,
    provider: fs.provider,
    base,
    outsideDir: area.outside,
    outOfBand: {
      writeBytes: (path, bytes, o) => writeOutOfBand(path, bytes, o?.keepMtime ?? false),
      remove: (path) => fsp.rm(path),
      async readBytes(path) {
        try {
          return new Uint8Array(await fsp.readFile(path));
        } catch (err) {
          if ((err as { code?: string }).code === 'ENOENT') return undefined;
          throw err;
        }
      },
    },
    setup: {
      mkdir: async (path) => void (await fsp.mkdir(path, { recursive: true })),
      async symlink(target, path) {
        await fsp.mkdir(dirname(path), { recursive: true });
        await fsp.symlink(target, path);
      },
      async mkfifo(path) {
        await fsp.mkdir(dirname(path), { recursive: true });
        execFileSync('mkfifo', [path]);
      },
    },
    capabilities: { symlinks: true, executable: true, linkCreation: true },
    cleanup: () => area.cleanup(),
  };
}

describeConformance('local', () => localSubject());

// The portable anchoring mode and the non-durable mode must keep the same contract.
if (process.env.DSH_FS_LOCAL_ALL_MODES) {
  describeConformance('local (inode anchoring)', () => localSubject({ anchoring: 'inode' }));
  describeConformance('local (durable: false)', () => localSubject({ durable: false }));
}
