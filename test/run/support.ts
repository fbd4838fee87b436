import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { runQuietly } from '../../src/run/host.js';
import { mountOptions, privileged } from '../../src/run/namespace.js';

/** Why runs on overlayfs cannot be tested here, or undefined when they can (CI can: it must not skip). */
export async function overlayfsMissing(): Promise<string | undefined> {
  const dir = realpathSync(await mkdtemp(join(tmpdir(), 'dsh-fs-run-probe-')));
  try {
    for (const d of ['lower', 'upper', 'work', 'merged']) await mkdir(join(dir, d));
    const options = mountOptions({ lowers: [join(dir, 'lower')], upper: join(dir, 'upper'), work: join(dir, 'work') }, privileged());
    const userns = privileged() ? [] : ['--user', '--map-root-user'];
    const { code, stderr } = await runQuietly('unshare', [...userns, '--mount', 'mount', '-t', 'overlay', 'x', '-o', options, join(dir, 'merged')]);
    if (code === -1) return `no unshare (util-linux): ${stderr}`;
    if (code !== 0) return `cannot mount overlayfs in a private mount namespace here: ${stderr.trim()}`;
    return undefined;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface Project {
  readonly dir: string;
  readonly root: string;
  readonly state: string;
  readonly scratch: string;
  sandbox(): Promise<OverlayFileSystem>;
  cleanup(): Promise<void>;
}

/** A project folder with `files`, and a sandbox over it kept in a state directory beside it. */
export async function project(files: Record<string, string> = {}): Promise<Project> {
  const dir = realpathSync(await mkdtemp(join(tmpdir(), 'dsh-fs-run-')));
  const root = join(dir, 'project');
  await mkdir(root);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  }
  const state = join(dir, 'state');
  return {
    dir,
    root,
    state,
    scratch: join(state, 'run'),
    sandbox: () => createOverlayFs({ lower: createLocalFs({ root }), stateDir: state }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
