import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { leasedFs } from '../../src/cli/lease.js';
import { LOCK_FILE, lockWanted, withStateLock } from '../../src/sandbox/lock.js';
import { openWorkspace, type Workspace } from '../../src/cli/workspace.js';
import { removeTemps, tempDir } from './helpers.js';

afterAll(removeTemps);

/** A sandbox workspace whose takes of the lock are counted. */
async function counted(withContended = true) {
  const dir = await tempDir();
  const root = join(dir, 'root');
  await mkdir(root);
  await writeFile(join(root, 'a.txt'), 'a\n');
  const stateDir = join(dir, 'state');
  const inner = await openWorkspace({ root, mode: 'sandbox', stateDir });
  const takes = { n: 0 };
  const workspace: Workspace = {
    ...inner,
    use: (fn, options) => inner.use((fs) => (takes.n++, fn(fs)), options),
    ...(withContended ? {} : { contended: undefined }),
  };
  const fs = leasedFs(workspace, await inner.use(async (f) => f));
  return { fs, stateDir, takes, workspace };
}

/** Calls back to back (never idle long enough to let go) until `done` says so. */
async function burst(fs: Awaited<ReturnType<typeof counted>>['fs'], done: () => boolean): Promise<void> {
  const target = await fs.resolve('a.txt');
  while (!done()) await fs.stat(target, { versioned: false });
}

const pastHold = () => {
  const t0 = Date.now();
  // Past the lease's second of holding, with room to spare.
  return () => Date.now() - t0 > 1_400;
};

// Concurrent: each waits out the lease's second of holding.
describe.concurrent('a leased sandbox', () => {
  it('keeps the lock through a long burst while nobody waits for it', async () => {
    const { fs, takes } = await counted();
    const before = takes.n;
    await burst(fs, pastHold());
    fs.close();
    expect(takes.n - before).toBe(1);
  });

  it('lets it go regularly when the workspace cannot tell whether anyone waits', async () => {
    const { fs, takes } = await counted(false);
    const before = takes.n;
    await burst(fs, pastHold());
    fs.close();
    expect(takes.n - before).toBeGreaterThanOrEqual(2);
  });

  it('lets it go for another taker of the lock (commit, discard, another server), then takes it back', async () => {
    const { fs, stateDir, takes } = await counted();
    const before = takes.n;
    await fs.stat(await fs.resolve('a.txt'));
    let ran = false;
    // Started while the lease holds the lock.
    const other = withStateLock(stateDir, async () => void (ran = true), { timeoutMs: 20_000 });
    const busy = burst(fs, () => ran);
    await other;
    await busy;
    fs.close();
    expect(ran).toBe(true);
    expect(takes.n - before).toBeGreaterThanOrEqual(2);
    // The waiter's mark is gone with it.
    expect((await readdir(stateDir)).filter((n) => n.startsWith(`${LOCK_FILE}.wait.`))).toEqual([]);
  });

  it('lets it go for a call of this process that does not go through the lease', async () => {
    const { fs, workspace } = await counted();
    await fs.stat(await fs.resolve('a.txt'));
    let ran = false;
    const other = workspace.use(async () => void (ran = true));
    const busy = burst(fs, () => ran);
    await Promise.all([other, busy]);
    fs.close();
    expect(ran).toBe(true);
  });
});

describe('lockWanted', () => {
  it('sees a waiting taker by its fresh mark, and ignores one a dead waiter left', async () => {
    const dir = await tempDir();
    expect(await lockWanted(dir)).toBe(false);
    const mark = join(dir, `${LOCK_FILE}.wait.abc`);
    await writeFile(mark, '{}\n');
    expect(await lockWanted(dir)).toBe(true);
    const past = new Date(Date.now() - 60_000);
    await utimes(mark, past, past);
    expect(await lockWanted(dir)).toBe(false);
  });
});
