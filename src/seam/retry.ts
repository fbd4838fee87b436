import { clearTimeout, setTimeout } from 'node:timers';
import { FsError, throwIfAborted } from './errors.js';

/**
 * The pause before an unguarded read-modify-write tries again after losing a race (G6). There is
 * no bound on the attempts: losing to other writers is not a failure, so only the caller's signal
 * (an abort, or a deadline such as `AbortSignal.timeout`) ends the loop. Writers that keep
 * colliding spread out: the ceiling doubles with each loss, and the pause is drawn below it.
 */
export const RETRY_BASE_MS = 1;
export const RETRY_CAP_MS = 50;

/** The pause after the `lost`-th lost race: uniform in [0, min(cap, base·2^(lost-1))). */
export function retryDelayMs(lost: number, random: () => number = Math.random): number {
  const ceiling = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.min(Math.max(lost, 1) - 1, 30));
  return ceiling * Math.min(Math.max(random(), 0), 1 - Number.EPSILON);
}

/**
 * Waits `retryDelayMs(lost)`, or rejects with FS_ABORTED as soon as the signal fires. Timers
 * come from node:timers, which fake timers in a caller's tests leave alone (as the seam's yields).
 */
export function pauseBeforeRetry(lost: number, signal: AbortSignal | undefined, what: string): Promise<void> {
  throwIfAborted(signal, what);
  const ms = retryDelayMs(lost);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new FsError('FS_ABORTED', `${what}: aborted`));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
