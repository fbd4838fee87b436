import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { describeConformance, type ConformanceSubject } from '../../src/conformance/index.js';
import { ensureBuilt } from '../cli/helpers.js';
import { forceUnmount, fuseUnavailable } from './helpers.js';

const why = await fuseUnavailable();
if (why !== undefined) console.warn(`mount tests skipped: ${why}`);

/**
 * Rules the mount cannot keep, with why: none. (The local backend publishes by rename where link(2)
 * is refused, as it is on a mount, and looks a name up again where libfuse 2 answers ENOENT for a
 * node that a rename replaced while the backend held it.)
 */
export const MOUNT_EXCEPTIONS: Readonly<Record<string, string>> = {};

/**
 * The same through a mounted overlay sandbox, over a memory lower. Over a local lower every rule
 * that writes would fail: the local backend under test publishes through temp files named
 * `.NAME.<32 hex>.dsh-tmp`, and the sandbox refuses exactly those names (EINVAL) because its local
 * lower reserves them for its own temp files (a commit would hand the lower a file its sweep
 * removes). The test below keeps that reason checked.
 */
export const OVERLAY_MOUNT_EXCEPTIONS: Readonly<Record<string, string>> = {};

/** A mount served by another process (serve-memory.mjs, serve-overlay.mjs), with scratch directories. */
class Served {
  server: ChildProcess | undefined;
  mountpoint = '';
  outside = '';
  /** The overlay's lower directory (unused by the memory server). */
  lower = '';
  areas = 0;

  constructor(
    private readonly script: string,
    private readonly lowerKind: 'local' | 'memory' = 'local',
  ) {}

  async start(): Promise<void> {
    await ensureBuilt();
    this.mountpoint = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-kit-'));
    this.outside = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-kit-outside-'));
    this.lower = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-kit-lower-'));
    const script = fileURLToPath(new URL(this.script, import.meta.url));
    this.server = spawn(process.execPath, [script, this.mountpoint, this.lower, this.lowerKind], { cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: this.server.stdout! })[Symbol.asyncIterator]();
    const first = await lines.next();
    if (first.value !== 'ready') throw new Error(`the mount server ${this.script} did not start`);
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('close', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await forceUnmount(this.mountpoint);
    for (const dir of [this.mountpoint, this.outside, this.lower]) if (dir !== '') await rm(dir, { recursive: true, force: true });
  }

  readonly subject = (): Promise<ConformanceSubject> => mountedSubject(this);
}

/** A fresh root per rule on the mount, the local backend over it, and out-of-band writes through the mount too. */
async function mountedSubject(served: Served): Promise<ConformanceSubject> {
  const { mountpoint, outside } = served;
  const root = join(mountpoint, `area-${++served.areas}`);
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
  const memory = new Served('./serve-memory.mjs');
  beforeAll(() => memory.start(), 120_000);
  afterAll(() => memory.stop());
  describeConformance('local over a mounted memory filesystem', memory.subject, {
    numRuns: Number(process.env.DSH_FS_CONFORMANCE_RUNS ?? 10),
    skip: Object.keys(MOUNT_EXCEPTIONS),
  });
});

// The second run of the kit through a mount is the full size's (npm run test:full, which CI runs):
// npm test keeps within its time with the first.
const fullSize = process.env.DSH_FS_SCALE === 'full' || process.env.DSH_FS_HEAVY === '1';
if (why === undefined && !fullSize) console.info('the kit through a mounted overlay runs at full size only (npm run test:full)');
describe.skipIf(why !== undefined || !fullSize)('the conformance kit through a mounted overlay', () => {
  const overlay = new Served('./serve-overlay.mjs', 'memory');
  beforeAll(() => overlay.start(), 120_000);
  afterAll(() => overlay.stop());
  describeConformance('local over a mounted overlay of a memory filesystem', overlay.subject, {
    numRuns: Number(process.env.DSH_FS_CONFORMANCE_RUNS ?? 10),
    skip: Object.keys(OVERLAY_MOUNT_EXCEPTIONS),
  });
});

describe.skipIf(why !== undefined)('a mounted overlay of a local directory', () => {
  const overlay = new Served('./serve-overlay.mjs', 'local');
  beforeAll(() => overlay.start(), 120_000);
  afterAll(() => overlay.stop());

  it('refuses the names its lower reserves (a local backend’s temp files) and takes every other', async () => {
    const dir = join(overlay.mountpoint, 'd');
    await fsp.mkdir(dir);
    await fsp.writeFile(join(dir, 'f.txt'), 'kept\n');
    const reserved = join(dir, `.f.txt.${'0'.repeat(32)}.dsh-tmp`);
    await expect(fsp.writeFile(reserved, 'x')).rejects.toMatchObject({ code: 'EINVAL' });
    expect(await fsp.readdir(dir)).toEqual(['f.txt']);
    expect(await fsp.readFile(join(dir, 'f.txt'), 'utf8')).toBe('kept\n');
    // The sandbox only: the lower directory is untouched.
    expect(await fsp.readdir(overlay.lower)).toEqual([]);
  });
});
