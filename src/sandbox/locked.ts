// An overlay kept in a state directory, used under the state's cross-process lock: the discipline
// of `dsh-fs serve`, shared by the CLI's workspace and createSandbox.
import { AsyncLocalStorage } from 'node:async_hooks';
import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { KeyedMutex } from '../seam/index.js';
import { lockWanted, withStateLock, type StateLockOptions } from './lock.js';

/** The overlay's state document and the journal of changes since it, as the overlay backend names them. */
export const STATE_DOCUMENT = 'overlay.json';
const STATE_JOURNAL = 'overlay.journal';

export interface LockedOverlay {
  /**
   * Runs `fn` on the overlay as other processes left it: one call at a time in this process,
   * holding the state's lock, the overlay reopened when another process (a commit, a discard)
   * changed the state since. A `use` inside `fn` runs at once on the same overlay.
   */
  use<T>(fn: (overlay: OverlayFileSystem) => Promise<T>, options?: StateLockOptions): Promise<T>;
  /** The overlay of the last `use` (undefined before the first). */
  current(): OverlayFileSystem | undefined;
  /** Whether a `use` waits, in this process or another, for the one running now. */
  contended(): Promise<boolean>;
}

/** `open` opens the overlay from the state directory; it runs under the lock, as recovery may write. */
export function lockedOverlay(stateDir: string, open: () => Promise<OverlayFileSystem>, defaults: StateLockOptions = {}): LockedOverlay {
  const serial = new KeyedMutex();
  // Which `use` a call runs inside; `open` false once it ended (a timer it left must wait its turn).
  const held = new AsyncLocalStorage<{ readonly overlay: OverlayFileSystem; open: boolean }>();
  let overlay: OverlayFileSystem | undefined;
  let stamp: string | undefined;
  let queued = 0;

  // The state is a document plus a journal of the changes since it (format 3): both, in order.
  const stampNow = async () => {
    const bytes = await readFile(join(stateDir, STATE_DOCUMENT)).catch(() => undefined);
    if (bytes === undefined) return 'absent';
    const journal = await readFile(join(stateDir, STATE_JOURNAL)).catch(() => undefined);
    return `${hash('sha256', bytes, 'hex')}:${journal === undefined ? 'none' : hash('sha256', journal, 'hex')}`;
  };

  const use = <T>(fn: (overlay: OverlayFileSystem) => Promise<T>, options: StateLockOptions = defaults): Promise<T> => {
    const mine = held.getStore();
    if (mine?.open === true) return fn(mine.overlay);
    queued++;
    let counted = true;
    const entered = () => {
      if (counted) queued--;
      counted = false;
    };
    const locked = async () => {
      entered();
      if (overlay === undefined || (await stampNow()) !== stamp) overlay = await open();
      const inside = { overlay, open: true };
      try {
        return await held.run(inside, () => fn(inside.overlay));
      } finally {
        inside.open = false;
        stamp = await stampNow();
      }
    };
    return serial.run('', () => withStateLock(stateDir, locked, options)).finally(entered);
  };
  return { use, current: () => overlay, contended: async () => queued > 0 || (await lockWanted(stateDir).catch(() => true)) };
}
