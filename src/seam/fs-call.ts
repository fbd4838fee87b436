import { setImmediate } from 'node:timers';
import { throwIfAborted, toFsError } from './errors.js';

/** A provider call as the contract promises it: abortable, yielding to timers, failing with FsErrors only. */
export async function call<T>(what: string, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  throwIfAborted(signal, what);
  if (dueToYield()) {
    await yieldToTimers();
    throwIfAborted(signal, what);
  }
  try {
    return await fn();
  } catch (err) {
    throw toFsError(err, what);
  }
}

/**
 * A provider that never waits for I/O (the memory one) would otherwise keep the event loop to
 * itself through a long run of calls, a search or an agent loop: no timer, and so no
 * `AbortSignal.timeout`, could fire until it ended. Every call checks the clock, and one that
 * comes 10 ms after the last yield lets timers and I/O run first. `setImmediate` is taken from
 * node:timers, which fake timers in a caller's tests leave alone.
 */
const YIELD_EVERY_MS = 10;
let lastYield = performance.now();

export function dueToYield(): boolean {
  return performance.now() - lastYield >= YIELD_EVERY_MS;
}

export function yieldToTimers(): Promise<void> {
  return new Promise((resolve) =>
    setImmediate(() => {
      lastYield = performance.now();
      resolve();
    }),
  );
}
