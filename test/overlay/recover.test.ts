import { promises as fsp, type PathLike } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { activeJournals } from '../../src/backends/local/journal.js';
import { createOverlayFs, type OverlayRecovery } from '../../src/backends/overlay/index.js';

// Who finishes a commit a killed process left: the sandbox that started it (its state directory),
// nobody else while that directory exists; a sandbox that is gone has it rolled back.

let dir: string;
let root: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'dsh-fs-recover-')));
  root = join(dir, 'root');
  await mkdir(join(root, 'src'), { recursive: true });
  await writeFile(join(root, 'src/a.txt'), 'old\n');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A sandbox in `state` with a.txt changed, whose commit "died" once its journal was written. */
async function killedCommit(state: string | undefined): Promise<void> {
  const lower = createLocalFs({ root });
  const sandbox = await createOverlayFs({ lower, ...(state === undefined ? {} : { stateDir: state }) });
  await sandbox.writeText(await sandbox.resolve(join(root, 'src/a.txt')), 'new\n');
  await lower.provider.journal.begin({
    kind: 'commit',
    ...(state === undefined ? {} : { owner: await realpath(state) }),
    payload: { paths: null, force: false },
    keys: [join(root, 'src/a.txt')],
  });
  // Half of it: a temp file of the write under way.
  await writeFile(join(root, 'src/.a.txt.0123456789abcdef0123456789abcdef.dsh-tmp'), 'ne');
  activeJournals.clear();
}

const open = async (state: string) => {
  const said: OverlayRecovery[] = [];
  const sandbox = await createOverlayFs({ lower: createLocalFs({ root }), stateDir: state, onRecovered: (r) => said.push(r) });
  expect(said).toEqual(sandbox.recovered);
  return sandbox;
};

describe('recovery on open (J1)', () => {
  it("another sandbox leaves it; the one that started it finishes it, and says so once", async () => {
    await killedCommit(join(dir, 'a'));
    const other = await open(join(dir, 'b'));
    expect(other.recovered).toMatchObject([{ kind: 'commit', action: 'left', owner: join(dir, 'a'), pid: process.pid }]);
    expect(await readFile(join(root, 'src/a.txt'), 'utf8')).toBe('old\n');
    const mine = await open(join(dir, 'a'));
    expect(mine.recovered).toMatchObject([{ kind: 'commit', action: 'finished', paths: [join(root, 'src/a.txt')] }]);
    expect(mine.recovered[0]!.message).toMatch(/^finished the commit that process \d+, which was stopped, had left unfinished: 1 more path committed$/);
    expect(await readFile(join(root, 'src/a.txt'), 'utf8')).toBe('new\n');
    expect(await readdir(join(root, 'src'))).toEqual(['a.txt']);
    expect(await readdir(root)).toEqual(['src']);
    expect(await mine.changes()).toEqual([]);
    expect((await open(join(dir, 'a'))).recovered).toEqual([]);
  });

  it('a sandbox whose state directory is gone, or that was in memory, has it rolled back', async () => {
    await killedCommit(join(dir, 'a'));
    await rm(join(dir, 'a'), { recursive: true });
    const other = await open(join(dir, 'b'));
    expect(other.recovered).toMatchObject([{ kind: 'commit', action: 'rolledBack' }]);
    expect(await readFile(join(root, 'src/a.txt'), 'utf8')).toBe('old\n');
    expect(await readdir(join(root, 'src'))).toEqual(['a.txt']);

    await killedCommit(undefined);
    // As a commit writes: a new file renamed over the old one.
    await writeFile(join(root, 'src/next'), 'new, half committed\n');
    await rename(join(root, 'src/next'), join(root, 'src/a.txt'));
    const again = await open(join(dir, 'b'));
    expect(again.recovered).toMatchObject([{ kind: 'commit', action: 'rolledBack', paths: [join(root, 'src/a.txt')] }]);
    expect(await readFile(join(root, 'src/a.txt'), 'utf8')).toBe('old\n');
    expect(await readdir(root)).toEqual(['src']);
  });

  it('a rollback that fails is reported, the sandbox still opens, and the next open does it', async () => {
    await killedCommit(undefined);
    await writeFile(join(root, 'src/next'), 'new\n');
    await rename(join(root, 'src/next'), join(root, 'src/a.txt'));
    // Putting a.txt back fails; claiming the journal does not.
    const io = {
      ...fsp,
      rename: async (from: PathLike, to: PathLike): Promise<void> =>
        String(to).endsWith('/a.txt') ? Promise.reject(Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' })) : fsp.rename(from, to),
    };
    const failing = await createOverlayFs({ lower: createLocalFs({ root, io }), stateDir: join(dir, 'b') });
    expect(failing.recovered).toMatchObject([{ kind: 'commit', action: 'failed', message: expect.stringMatching(/^FS_IO_ERROR: /) }]);
    expect(await readFile(join(root, 'src/a.txt'), 'utf8')).toBe('new\n');
    const again = await open(join(dir, 'b'));
    expect(again.recovered).toMatchObject([{ kind: 'commit', action: 'rolledBack' }]);
    expect(await readFile(join(root, 'src/a.txt'), 'utf8')).toBe('old\n');
  });
});
