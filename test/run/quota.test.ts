import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { summary } from '../../src/cli/run.js';
import { runInSandbox } from '../../src/run/index.js';
import { overlayfsMissing, project, type Project } from './support.js';

const missing = await overlayfsMissing();
if (missing !== undefined && process.env.CI) throw new Error(`CI must run the overlayfs tests: ${missing}`);

const files = (n: number, size: number) => `for i in $(seq 1 ${n}); do head -c ${size} /dev/zero > out$i; done`;

describe.skipIf(missing !== undefined)(`a run into a sandbox with a quota${missing === undefined ? '' : ` (skipped: ${missing})`}`, () => {
  let p: Project;
  afterEach(async () => p?.cleanup());

  const open = (limits: { maxBytes?: number; maxFiles?: number }) => createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: p.state, ...limits });

  it('an import that would pass maxBytes is refused whole: the sandbox unchanged, the program\'s files kept, the limit and use named', async () => {
    p = await project({ 'a.txt': 'a\n' });
    const sandbox = await open({ maxBytes: 10_000 });
    await sandbox.writeBytes(await sandbox.resolve(join(p.root, 'agent.bin')), new Uint8Array(1000));
    const before = sandbox.checkpoints().length;
    const result = await runInSandbox(sandbox, ['sh', '-c', `${files(20, 1000)} && echo A > a.txt && rm agent.bin`], { scratchDir: p.scratch, stdio: 'pipe' });
    expect(result.exitCode).toBe(0);
    expect(result.refused?.code).toBe('FS_QUOTA_EXCEEDED');
    expect(result.refused?.message).toContain('quota of 10,000 bytes');
    expect(result.refused?.message).toContain('in use: 1,000 bytes in 1 file');
    expect([result.added, result.changed, result.deleted, result.checkpoint]).toEqual([[], [], [], undefined]);
    // Nothing of the run: not its files, not its edit, not its removal.
    expect(sandbox.checkpoints().length).toBe(before);
    expect(await sandbox.stat(await sandbox.resolve(join(p.root, 'out1')))).toBeUndefined();
    expect((await sandbox.readText(await sandbox.resolve(join(p.root, 'a.txt')))).text).toBe('a\n');
    expect((await sandbox.stat(await sandbox.resolve(join(p.root, 'agent.bin'))))?.size).toBe(1000);
    // All the program wrote is kept for the user, without the whiteout of its removal.
    const kept = result.refused!.kept!;
    expect((await readdir(kept)).sort()).toEqual(['a.txt', ...Array.from({ length: 20 }, (_, i) => `out${i + 1}`)].sort());
    expect(await readFile(join(kept, 'a.txt'), 'utf8')).toBe('A\n');
    expect(summary(result, p.root)).toMatch(/^run: nothing imported \(FS_QUOTA_EXCEEDED\): .*quota of 10,000 bytes.*; the program's files are kept in /);
    // Reopened, the sandbox is as it was, and a run within the limit imports.
    const again = await open({ maxBytes: 10_000 });
    expect(again.checkpoints().length).toBe(before);
    const fits = await runInSandbox(again, ['sh', '-c', files(8, 1000)], { scratchDir: p.scratch });
    expect(fits.refused).toBeUndefined();
    expect(fits.added.length).toBe(8);
  });

  it('maxFiles counts the run\'s new files and links; what the run removes makes room for what it adds', async () => {
    p = await project({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const sandbox = await open({ maxFiles: 3 });
    const over = await runInSandbox(sandbox, ['sh', '-c', `${files(3, 10)} && ln -s a.txt l`], { scratchDir: p.scratch });
    expect(over.refused?.message).toContain('quota of 3 files');
    expect(sandbox.checkpoints().length).toBe(0);
    const within = await runInSandbox(sandbox, ['sh', '-c', `${files(2, 10)} && ln -s a.txt l`], { scratchDir: p.scratch });
    expect(within.refused).toBeUndefined();
    expect(within.added.length).toBe(3);
    // At the limit: one removed, one added (and one of the sandbox's own rewritten).
    const swap = await runInSandbox(sandbox, ['sh', '-c', 'rm out1 && echo new > c.txt && echo 2 > out2'], { scratchDir: p.scratch });
    expect(swap.refused).toBeUndefined();
    expect([swap.added, swap.changed, swap.deleted]).toEqual([[join(p.root, 'c.txt')], [join(p.root, 'out2')], [join(p.root, 'out1')]]);
  });
});
