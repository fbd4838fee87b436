import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { smallFile } from './subjects.js';

/** Relative path of file `i` of the tree: nested four levels, five files per leaf directory. */
export const treePath = (i: number) =>
  `src/pkg${Math.floor(i / 200)}/mod${Math.floor(i / 20) % 10}/part${Math.floor(i / 5) % 4}/f${i % 5}.ts`;

/**
 * Runs a shell script and resolves with its stdout; rejects on a non-zero exit. Always spawned
 * asynchronously from `/`: the bench process serves the mounts, so a child started with its cwd
 * inside one would wait on an event loop that is waiting for it. Scripts `cd` in themselves.
 */
export function sh(script: string, okCodes: readonly number[] = [0]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      okCodes.includes(code ?? -1) ? resolve(out) : reject(new Error(`"${script}" exited ${code}: ${err.trim().slice(0, 500)}`)),
    );
  });
}

/** A small source-like project of `files` files of ~1 KiB, under git with one commit. */
export async function makeProject(dir: string, files: number): Promise<void> {
  for (let i = 0; i < files; i++) {
    const path = join(dir, treePath(i));
    if (i % 5 === 0) await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, smallFile(i));
  }
  await commitAll(dir);
}

/** Makes `dir` a git repository holding everything in it (what its .gitignore leaves out aside) in one commit. */
export async function commitAll(dir: string): Promise<void> {
  const git = 'git -c user.name=bench -c user.email=bench@example.invalid -c init.defaultBranch=main';
  await sh(`cd '${dir}' && ${git} init -q && ${git} add -A && ${git} commit -qm tree`);
}

/** Every file and directory below `dir` (relative path → bytes, null for a directory). */
export async function readTree(dir: string, prefix = '', into = new Map<string, Buffer | null>()): Promise<Map<string, Buffer | null>> {
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      into.set(rel, null);
      await readTree(dir, rel, into);
    } else if (entry.isFile()) {
      into.set(rel, await readFile(join(dir, rel)));
    }
  }
  return into;
}
