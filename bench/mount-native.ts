import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { kernelOptions, type MountOptions } from '../src/mount/index.js';
import { sh } from './mount-fixture.js';

/**
 * The native floor (bench/native-floor/floor.c, built by bench/native-floor/build.sh): the tree at
 * `source` copied into memory by a C program and served at `at` through libfuse 2's high-level
 * API on the kernel options of the other mounts. A separate process: the bench's own event loop
 * is not in its path. Returns how to stop it.
 */
export async function startNativeFloor(binary: string, source: string, at: string, options: MountOptions): Promise<() => Promise<void>> {
  // The same options as fuse-native is given (its fsname carries them), with default_permissions.
  const [, ...kernel] = String(kernelOptions(options, 'native').fsname).split(',');
  const child = spawn(binary, [source, at, '-f', '-o', [...kernel, 'default_permissions', 'fsname=native-floor'].join(',')], { stdio: 'ignore' });
  const exited = new Promise<void>((done) => child.on('exit', () => done()));
  const failed = new Promise<never>((_, reject) => child.on('error', reject));
  const parentDev = (await stat(dirname(at))).dev;
  for (let waited = 0; (await stat(at)).dev === parentDev; waited += 20) {
    if (waited > 10_000 || child.exitCode !== null) throw new Error(`the native floor at "${binary}" did not mount "${at}"`);
    await Promise.race([sleep(20), failed]);
  }
  return async () => {
    await sh(`fusermount -u '${at}'`, [0, 1]);
    await exited;
  };
}
