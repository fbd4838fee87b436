import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { toFsError } from '../seam/index.js';
import { alive, removeTree } from './host.js';
import type { LayerPaths } from './layer.js';

/**
 * A sandbox's scratch space for runs:
 *   layer/, layer.json   the sandbox's changes as a lower layer, kept between runs (layer.ts)
 *   layer.lock           the pid of the run using the layer (another run meanwhile builds its own)
 *   runs/PID.RANDOM/     one run's upper and work directories (and its own layer, if it needed one)
 *   conflicts/RUN/       the program's bytes at paths that were conflicts, kept for the user
 */
export interface Scratch {
  readonly dir: string;
  readonly run: string;
  readonly id: string;
  readonly upper: string;
  readonly work: string;
  readonly layer: LayerPaths;
  /** True when `layer` is the one kept between runs (this run holds its lock). */
  readonly shared: boolean;
  /** Lets go of the shared layer (when this run held it) and removes the run's directory. */
  release(): Promise<void>;
}

const RUN_NAME = /^(\d+)\.[0-9a-f]+$/;

/** Removes the directories of runs whose process is gone (killed runs). */
export async function sweepRuns(dir: string): Promise<string[]> {
  const runs = join(dir, 'runs');
  const names = await readdir(runs).catch(() => [] as string[]);
  const swept: string[] = [];
  for (const name of names) {
    const m = RUN_NAME.exec(name);
    if (m === null || alive(Number(m[1]))) continue;
    await removeTree(join(runs, name));
    swept.push(name);
  }
  const holder = await readFile(join(dir, 'layer.lock'), 'utf8').catch(() => undefined);
  if (holder !== undefined && !alive(Number(holder.trim()))) await rm(join(dir, 'layer.lock'), { force: true });
  return swept;
}

/** Makes this run's directories, and takes the shared layer if no live run holds it. */
export async function openScratch(dir: string): Promise<Scratch> {
  try {
    await sweepRuns(dir);
    const id = `${process.pid}.${randomBytes(4).toString('hex')}`;
    const run = join(dir, 'runs', id);
    await mkdir(join(run, 'upper'), { recursive: true });
    await mkdir(join(run, 'work'), { recursive: true });
    const shared = await takeLayer(dir);
    const layer = shared
      ? { dir: join(dir, 'layer'), manifest: join(dir, 'layer.json') }
      : { dir: join(run, 'layer'), manifest: join(run, 'layer.json') };
    const release = async () => {
      if (shared) await rm(join(dir, 'layer.lock'), { force: true });
      await removeTree(run);
    };
    return { dir, run, id, upper: join(run, 'upper'), work: join(run, 'work'), layer, shared, release };
  } catch (err) {
    throw toFsError(err, `cannot prepare the run's scratch space in "${dir}"`);
  }
}

async function takeLayer(dir: string): Promise<boolean> {
  try {
    const handle = await open(join(dir, 'layer.lock'), 'wx');
    await handle.writeFile(`${process.pid}\n`);
    await handle.close();
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'EEXIST') return false;
    throw err;
  }
}
