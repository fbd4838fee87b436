/**
 * Start offsets for fixed race examples. A bug that checks, yields, then acts opens a window of a
 * few turns; where it falls depends on the path to the provider (and on the seam's timer yields,
 * which follow the wall clock), so racers start at spread moments and one of them lands inside.
 */
export const SPREAD = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, -1, -2, -3] as const;

/** Waits `ticks` microtask turns, or with a negative count that many macrotasks. */
export async function after(ticks: number): Promise<void> {
  for (let i = 0; i < -ticks; i++) await new Promise((resolve) => setImmediate(resolve));
  let p = Promise.resolve();
  for (let i = 0; i < ticks; i++) p = p.then(() => undefined);
  return p;
}
