import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../../src/seam/lock.js';

describe('KeyedMutex', () => {
  it('holds 20,000 keys nested one inside the other without running out of stack (apply_patch locks every file of a batch)', async () => {
    const mutex = new KeyedMutex();
    const nest = (i: number): Promise<number> => (i === 0 ? Promise.resolve(0) : mutex.run(`k${i}`, async () => 1 + (await nest(i - 1))));
    await expect(nest(20_000)).resolves.toBe(20_000);
    expect(mutex.size).toBe(0);
  });

  it('runs the holders of one key one at a time, in order', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const hold = (name: string) =>
      mutex.run('k', async () => {
        log.push(`${name} in`);
        await new Promise((r) => setTimeout(r, 1));
        log.push(`${name} out`);
      });
    await Promise.all([hold('a'), hold('b'), hold('c')]);
    expect(log).toEqual(['a in', 'a out', 'b in', 'b out', 'c in', 'c out']);
    expect(mutex.size).toBe(0);
  });
});
