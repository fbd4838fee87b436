import { spawn } from 'node:child_process';
import { chmod, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { FsError } from '../seam/index.js';

/** Runs a program to its end; its exit code, or -1 when it could not start. */
export function runQuietly(file: string, args: readonly string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', (err) => resolve({ code: -1, stderr: err.message }));
    child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
  });
}

/**
 * Overlayfs whiteouts (character devices 0/0; Linux lets any user make those since 5.8). Node has
 * no mknod, so a shell loop makes them, a few hundred a process.
 */
export async function makeWhiteouts(paths: readonly string[]): Promise<void> {
  for (let i = 0; i < paths.length; i += 200) {
    const chunk = paths.slice(i, i + 200);
    const { code, stderr } = await runQuietly('sh', ['-c', 'for p; do [ -e "$p" ] || [ -L "$p" ] || mknod "$p" c 0 0 || exit 1; done', 'dsh-fs-whiteout', ...chunk]);
    if (code !== 0) throw new FsError('FS_UNSUPPORTED', `cannot lay out the sandbox's removals for overlayfs (mknod c 0 0): ${stderr.trim() || `exit ${code}`}`);
  }
}

/**
 * Removes a run's scratch directory. Overlayfs leaves its work directory's inner directory with
 * no permissions: made readable first where removing fails.
 */
export async function removeTree(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
  } catch {
    await openUp(dir);
    await rm(dir, { recursive: true, force: true });
  }
}

async function openUp(dir: string): Promise<void> {
  await chmod(dir, 0o700).catch(() => {});
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) await openUp(join(dir, e.name));
}

/** True while process `pid` exists (signal 0 reaches it, or it exists but is not ours). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: unknown }).code === 'EPERM';
  }
}
