import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'dsh-overlay-modes-'));
  dirs.push(d);
  return d;
}

const seed = { '/run.sh': '#!/bin/sh\necho hi\n', '/lib.sh': 'f() { :; }\n' };

describe('the executable bit in the overlay', () => {
  it('a mode change is recorded in the upper, shown by changes and diff as git does, and committed', async () => {
    const lower = createMemoryFs({ files: seed });
    const fs = await createOverlayFs({ lower });
    const run = await fs.resolve('/run.sh');
    await fs.setExecutable!(run, true);
    expect((await fs.stat(run))?.executable).toBe(true);
    expect((await lower.stat(await lower.resolve('/run.sh')))?.executable).toBe(false);
    const [change] = await fs.changes();
    expect(change).toMatchObject({ path: '/run.sh', kind: 'modified', executable: true });
    expect(change!.version).toBe(change!.baseVersion);
    expect(await fs.diff()).toBe('diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n');
    const result = await fs.commit();
    expect(result.committed).toEqual(['/run.sh']);
    expect((await lower.stat(await lower.resolve('/run.sh')))?.executable).toBe(true);
    expect(await fs.changes()).toEqual([]);
  });

  it('a new executable file is a new file of mode 100755; an edit of one keeps the bit through commit', async () => {
    const lower = createMemoryFs({ files: seed });
    const fs = await createOverlayFs({ lower });
    const tool = await fs.resolve('/bin/tool');
    await fs.writeText(tool, 'echo tool\n');
    await fs.setExecutable!(tool, true);
    expect(await fs.diff()).toContain('new file mode 100755\n');
    await fs.commit();
    await fs.writeText(tool, 'echo tool 2\n');
    expect((await fs.stat(tool))?.executable).toBe(true);
    await fs.commit();
    const inLower = await lower.resolve('/bin/tool');
    expect((await lower.stat(inLower))?.executable).toBe(true);
    expect((await lower.readText(inLower)).text).toBe('echo tool 2\n');
  });

  it('setting the bit and clearing it again leaves no change', async () => {
    const lower = createMemoryFs({ files: seed });
    const fs = await createOverlayFs({ lower });
    const run = await fs.resolve('/run.sh');
    await fs.setExecutable!(run, true);
    await fs.setExecutable!(run, false);
    expect(await fs.changes()).toEqual([]);
    expect(await fs.diff()).toBe('');
  });

  it('a clear of a lower executable file commits as a clear', async () => {
    const lower = createMemoryFs({ files: seed });
    await lower.setExecutable!(await lower.resolve('/run.sh'), true);
    const fs = await createOverlayFs({ lower });
    await fs.setExecutable!(await fs.resolve('/run.sh'), false);
    expect(await fs.diff()).toBe('diff --git a/run.sh b/run.sh\nold mode 100755\nnew mode 100644\n');
    await fs.commit();
    expect((await lower.stat(await lower.resolve('/run.sh')))?.executable).toBe(false);
  });

  it('a fork shows a mode change against its parent', async () => {
    const lower = createMemoryFs({ files: seed });
    const parent = await createOverlayFs({ lower });
    await parent.writeText(await parent.resolve('/lib.sh'), 'changed\n');
    const fork = await parent.fork();
    await fork.setExecutable!(await fork.resolve('/lib.sh'), true);
    expect(await fork.changes(undefined, { against: 'parent' })).toMatchObject([{ path: '/lib.sh', kind: 'modified', executable: true }]);
    expect(await fork.diff(undefined, { against: 'parent' })).toBe('diff --git a/lib.sh b/lib.sh\nold mode 100644\nnew mode 100755\n');
    expect(await parent.changes(undefined, { against: 'parent' })).toMatchObject([{ path: '/lib.sh', kind: 'modified' }]);
  });

  it('the bits of any set of files survive a reopen of the state directory', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom('/run.sh', '/lib.sh', '/new.sh'), fc.boolean()), { maxLength: 6 }), async (ops) => {
        const stateDir = await tempDir();
        const lower = createMemoryFs({ files: seed });
        const live = await createOverlayFs({ lower, stateDir });
        await live.writeText(await live.resolve('/new.sh'), 'new\n');
        for (const [path, bit] of ops) await live.setExecutable!(await live.resolve(path), bit);
        const reopened = await createOverlayFs({ lower, stateDir });
        for (const path of ['/run.sh', '/lib.sh', '/new.sh']) {
          expect((await reopened.stat(await reopened.resolve(path)))?.executable).toBe((await live.stat(await live.resolve(path)))?.executable);
        }
        expect(await reopened.changes()).toEqual(await live.changes());
      }),
      { numRuns: 15 },
    );
  });
});
