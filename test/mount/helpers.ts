import { spawn } from 'node:child_process';
import { hash } from 'node:crypto';
import { access, constants, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { lazyUnmount, type Mount } from '../../src/mount/index.js';
import { loadFuse } from '../../src/mount/load.js';
import { MAIN_JS } from '../cli/helpers.js';

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
    // A command that exits without reading its input (quick, now that the CLI starts fast) closes the pipe first.
    child.stdin.on('error', () => {});
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

/** Every path below `dir` with a digest of its bytes: equal before and after means untouched. */
export async function fingerprint(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(join(dir, prefix), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const rel = join(prefix, entry.name);
    if (entry.isDirectory()) out.push(`${rel}/`, ...(await fingerprint(dir, rel)));
    else out.push(`${rel} ${hash('sha256', await readFile(join(dir, rel)), 'hex')} ${(await stat(join(dir, rel))).mtimeMs}`);
  }
  return out;
}

/** Starts `dsh-fs mount` and waits for it to say it is mounted. */
export function startMount(args: readonly string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [MAIN_JS, 'mount', ...args], { cwd: '/', env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stderr });
    lines.on('line', (line) => {
      stderr += `${line}\n`;
      if (line.includes(' mounted ')) resolve();
    });
    void exited.then(() => reject(new Error(`dsh-fs mount exited: ${stderr}`)));
  });
  return { child, ready, exited, stderr: () => stderr };
}
