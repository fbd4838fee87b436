import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { describeConformance, type ConformanceSubject } from '../../src/conformance/index.js';
import { ensureBuilt } from '../cli/helpers.js';
import { forceUnmount, fuseUnavailable } from './helpers.js';

const why = await fuseUnavailable();
if (why !== undefined) console.warn(`mount tests skipped: ${why}`);

/**
 * Rules the mount cannot keep, with why: none. (The local backend publishes by rename where
 * link(2) is refused, as it is on a mount.)
 */
export const MOUNT_EXCEPTIONS: Readonly<Record<string, string>> = {};

let server: ChildProcess | undefined;
let mountpoint = '';
let outside = '';
let areas = 0;

async function startServer(): Promise<void> {
  await ensureBuilt();
  mountpoint = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-kit-'));
  outside = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-kit-outside-'));
  const script = fileURLToPath(new URL('./serve-memory.mjs', import.meta.url));
  server = spawn(process.execPath, [script, mountpoint], { cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: server.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.value !== 'ready') throw new Error('the mount server did not start');
}

/** A fresh root per rule on the mount, the local backend over it, and out-of-band writes through the mount too. */
async function mountedSubject(): Promise<ConformanceSubject> {
  const root = join(mountpoint, `area-${++areas}`);
  const base = join(root, 'work');
  await fsp.mkdir(base, { recursive: true });
  const fs = createLocalFs({ root });
  return {
    fs,
    provider: fs.provider,
    base,
    outsideDir: outside,
    outOfBand: {
      async writeBytes(path, bytes) {
        await fsp.mkdir(dirname(path), { recursive: true });
        await fsp.writeFile(path, bytes);
      },
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
    setup: { mkdir: async (path) => void (await fsp.mkdir(path, { recursive: true })) },
    capabilities: { symlinks: false, executable: true },
    cleanup: () => fsp.rm(root, { recursive: true, force: true }),
  };
}

describe.skipIf(why !== undefined)('the conformance kit through a mount', () => {
  beforeAll(startServer, 120_000);
  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('close', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await forceUnmount(mountpoint);
    await rm(mountpoint, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });
  describeConformance('local over a mounted memory filesystem', mountedSubject, {
    numRuns: Number(process.env.DSH_FS_CONFORMANCE_RUNS ?? 10),
    skip: Object.keys(MOUNT_EXCEPTIONS),
  });
});
