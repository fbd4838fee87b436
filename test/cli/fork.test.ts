import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { LOCK_FILE } from '../../src/sandbox/lock.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { REPO, ensureBuilt, project, removeTemps, serve, textOf } from './helpers.js';

afterAll(removeTemps);

async function run(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (s: string) => (sink(s), true) }) as unknown as Io['stdout'];
  const io: Io = { stdout: stream((s) => (stdout += s)), stderr: stream((s) => (stderr += s)), env: {}, cwd: REPO };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

describe('dsh-fs fork', () => {
  it('forks a sandbox into a new state directory; status and diff --against-parent show what the fork did differently', async () => {
    const p = await project({ 'a.txt': 'one\n', 'b.txt': 'two\n' });
    const overlay = await createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: p.state });
    await overlay.writeText(await overlay.resolve('a.txt'), 'ONE\n');
    const into = join(p.base, 'attempt-1');

    const forked = await run(['fork', '--root', p.root, '--state', p.state, '--into', into]);
    expect(forked).toMatchObject({ code: 0, stderr: '' });
    expect(forked.stdout).toContain(`into ${into}`);
    expect(existsSync(join(into, LOCK_FILE))).toBe(false);
    // The fork starts with the parent's changes.
    expect((await run(['status', '--root', p.root, '--state', into])).stdout).toBe('M a.txt\n');
    expect((await run(['status', '--root', p.root, '--state', into, '--against-parent'])).stdout).toBe('No changes.\n');

    const fork = await createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: into });
    await fork.writeText(await fork.resolve('b.txt'), 'TWO\n');
    expect((await run(['status', '--root', p.root, '--state', into])).stdout).toBe('M a.txt\nM b.txt\n');
    expect((await run(['status', '--root', p.root, '--state', into, '--against-parent'])).stdout).toBe('M b.txt\n');
    const diff = await run(['diff', '--root', p.root, '--state', into, '--against-parent', '--color', 'never']);
    expect(diff.stdout).toContain('-two\n+TWO\n');
    expect(diff.stdout).not.toContain('a.txt');
    const json = JSON.parse((await run(['diff', '--root', p.root, '--state', into, '--against-parent', '--json'])).stdout) as { path: string }[];
    expect(json.map((c) => c.path)).toEqual(['b.txt']);
    // The parent does not see the fork's change.
    expect((await run(['status', '--root', p.root, '--state', p.state])).stdout).toBe('M a.txt\n');

    // A state directory that holds a sandbox is no place for a fork.
    expect((await run(['fork', '--root', p.root, '--state', p.state, '--into', into])).code).toBe(2);
    expect((await run(['fork', '--root', p.root, '--state', p.state])).stderr).toMatch(/--into is required/);
    expect((await run(['fork', '--root', p.root, '--state', p.state, '--into', join(p.root, 'st')])).stderr).toMatch(/lies inside --root/);
  });

  it('serve --state NEWSTATE works on the fork; the parent does not see its writes', { timeout: 600_000 }, async () => {
    await ensureBuilt();
    const p = await project({ 'a.txt': 'one\n' });
    const overlay = await createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: p.state });
    await overlay.writeText(await overlay.resolve('a.txt'), 'parent\n');
    const into = join(p.base, 'attempt');
    expect((await run(['fork', '--root', p.root, '--state', p.state, '--into', into])).code).toBe(0);
    const s = await serve(['--root', p.root, '--state', into]);
    try {
      expect(textOf(await s.call('read', { file_path: join(p.root, 'a.txt') }))).toContain('parent');
      const wrote = await s.call('write', { file_path: join(p.root, 'new.txt'), content: 'from the fork\n' });
      expect(wrote.isError).toBeFalsy();
    } finally {
      await s.close();
    }
    expect((await run(['status', '--root', p.root, '--state', into, '--against-parent'])).stdout).toBe('A new.txt\n');
    expect((await run(['status', '--root', p.root, '--state', p.state])).stdout).toBe('M a.txt\n');
    // Commit the fork: the parent's change and the fork's reach the directory.
    expect((await run(['commit', '--root', p.root, '--state', into])).code).toBe(0);
    expect(existsSync(join(p.root, 'new.txt'))).toBe(true);
  });
});
