import { FsError, throwIfAborted, toFsError } from './errors.js';
import type { KeyedMutex } from './lock.js';
import { describeType } from './path.js';
import type { FsOpOptions, FsProvider, FsTarget } from './types.js';

/** The permission bits `chmod +x` (copying each read bit to its execute bit) or `chmod -x` leave. */
export function withExecutable(mode: number, executable: boolean): number {
  return executable ? mode | ((mode & 0o444) >> 2) | 0o100 : mode & ~0o111;
}

/** Whether permission bits make a file executable: its owner may run it. */
export function isExecutableMode(mode: number | bigint): boolean {
  return (Number(mode) & 0o100) !== 0;
}

/** X1 over a provider: arguments checked, the target's lock held, a store without the bit refused. */
export function createSetExecutable(
  provider: FsProvider,
  locks: KeyedMutex,
): (target: FsTarget, executable: boolean, options?: FsOpOptions) => Promise<void> {
  return async (target, executable, options) => {
    const what = `cannot change the mode of "${target.displayPath}"`;
    const signal = options?.signal;
    if (typeof executable !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `${what}: executable must be a boolean, got ${describeType(executable)}`);
    throwIfAborted(signal, what);
    const set = provider.setExecutable?.bind(provider);
    if (set === undefined) throw new FsError('FS_UNSUPPORTED', `${what}: this filesystem keeps no executable bit`);
    try {
      await locks.run(target.targetKey, async () => {
        const info = await provider.stat(target, { signal });
        if (info === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
        if (info.type !== 'file') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
        throwIfAborted(signal, what);
        await set(target, executable, { signal });
      });
    } catch (err) {
      throw toFsError(err, what);
    }
  };
}
