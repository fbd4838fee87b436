import { spawn } from 'node:child_process';
import { access, constants, readFile, rm } from 'node:fs/promises';
import { lazyUnmount, loadFuse, type Mount } from '../../src/mount/index.js';

/**
 * Why the mount tests cannot run here, or undefined when they can. In CI a missing piece is a
 * failure, not a skip: the CI script installs FUSE.
 */
export async function fuseUnavailable(): Promise<string | undefined> {
  try {
    await loadFuse();
    return undefined;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    if (process.env.CI) throw new Error(`CI must run the mount tests: ${why}`);
    return why;
  }
}

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a shell command, always asynchronously (the test process serves the mount on its event
 * loop) and from a cwd outside the mount: the script cds in itself.
 */
export function sh(script: string, env: NodeJS.ProcessEnv = {}, input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { cwd: '/', env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

export async function hasCommand(name: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && (await access(`${dir}/${name}`, constants.X_OK).then(() => true, () => false))) return true;
  }
  return false;
}

/** Whether anything is mounted at `where` (from /proc/mounts). */
export async function isMounted(where: string): Promise<boolean> {
  const mounts = await readFile('/proc/mounts', 'utf8');
  return mounts.split('\n').some((line) => line.split(' ')[1] === where);
}

/** Last resort in a finally: nothing stays mounted after a test, whatever failed. */
export async function forceUnmount(where: string): Promise<void> {
  if (await isMounted(where)) await lazyUnmount(where).catch(() => {});
}

/** Unmounts, then makes sure nothing stays mounted and removes the mountpoint, whatever failed. */
export async function cleanUp(mount: Mount | undefined, dir: string): Promise<void> {
  try {
    await mount?.unmount();
  } finally {
    await forceUnmount(dir);
    await rm(dir, { recursive: true, force: true });
  }
}
