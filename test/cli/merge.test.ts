import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { createSqliteFs, createSqliteUpperStore } from '../../src/backends/sqlite/index.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { REPO, project, removeTemps } from './helpers.js';

afterAll(removeTemps);

async function run(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (s: string) => (sink(s), true) }) as unknown as Io['stdout'];
  const io: Io = { stdout: stream((s) => (stdout += s)), stderr: stream((s) => (stderr += s)), env: {}, cwd: REPO };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

const A = Array.from({ length: 80 }, (_, i) => `line ${i + 1}\n`).join('');
const edit = (text: string, line: number, to: string) => text.split('\n').map((l, i) => (i === line - 1 ? to : l)).join('\n');

describe('dsh-fs merge', () => {
  it('merges two forks, reports a third one\'s conflict and changes nothing; with --markers commit refuses the file', async () => {
    const p = await project({ 'a.txt': A, 'c.txt': 'c\n' });
    const open = (state: string) => createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: state });
    const sandbox = await open(p.state);
    await sandbox.writeText(await sandbox.resolve('notes.txt'), 'kept\n');
    const forks = [1, 2, 3].map((i) => join(p.base, `fork-${i}`));
    for (const into of forks) expect((await run(['fork', '--root', p.root, '--state', p.state, '--into', into])).code).toBe(0);
    const [one, two, three] = await Promise.all(forks.map(open));
    await one!.writeText(await one!.resolve('a.txt'), edit(A, 2, 'line 2 by one'));
    await one!.writeText(await one!.resolve('b.txt'), 'b\n');
    await two!.writeText(await two!.resolve('a.txt'), edit(A, 40, 'line 40 by two'));
    await two!.remove(await two!.resolve('c.txt'));
    await three!.writeText(await three!.resolve('a.txt'), edit(A, 2, 'line 2 by three'));

    const merged1 = await run(['merge', '--root', p.root, '--state', p.state, '--from', forks[0]!, '--json']);
    expect(merged1).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(merged1.stdout)).toEqual({ merged: ['a.txt', 'b.txt'], conflicts: [] });
    const merged2 = await run(['merge', '--root', p.root, '--state', p.state, '--from', forks[1]!]);
    expect(merged2).toMatchObject({ code: 0, stdout: 'Merged 2 paths:\n  a.txt\n  c.txt\n' });
    const status = await run(['status', '--root', p.root, '--state', p.state]);
    expect(status.stdout).toBe('M a.txt\nA b.txt\nD c.txt\nA notes.txt\n');
    const view = await open(p.state);
    expect((await view.readText(await view.resolve('a.txt'))).text).toContain('line 40 by two');

    const conflict = await run(['merge', '--root', p.root, '--state', p.state, '--from', forks[2]!, '--json']);
    expect(conflict.code).toBe(1);
    expect(JSON.parse(conflict.stdout)).toEqual({
      merged: [],
      conflicts: [{ path: 'a.txt', kind: 'content', regions: [{ base: 'line 2\n', ours: 'line 2 by one\n', theirs: 'line 2 by three\n', baseStart: 2, oursStart: 2, theirsStart: 2 }] }],
    });
    expect((await run(['status', '--root', p.root, '--state', p.state])).stdout).toBe(status.stdout);
    const text = await run(['merge', '--root', p.root, '--state', p.state, '--from', forks[2]!, '--dry-run']);
    expect(text.stdout).toContain('1 conflict (nothing was changed):\n  content a.txt: 1 overlapping edit\n    base at line 2:\n      line 2\n');

    const marked = await run(['merge', '--root', p.root, '--state', p.state, '--from', forks[2]!, '--markers']);
    expect(marked.code).toBe(1);
    expect((await run(['status', '--root', p.root, '--state', p.state])).stdout).toContain('M a.txt (conflicted: holds merge markers)\n');
    const refused = await run(['commit', '--root', p.root, '--state', p.state, '--json']);
    expect(refused.code).toBe(1);
    const report = JSON.parse(refused.stdout) as { committed: { path: string }[]; conflicts: { path: string; message: string }[] };
    expect(report.committed.map((c) => c.path)).toEqual(['b.txt', 'c.txt', 'notes.txt']);
    expect(report.conflicts.map((c) => c.path)).toEqual(['a.txt']);
    expect(readFileSync(join(p.root, 'a.txt'), 'utf8')).toBe(A);
    expect(existsSync(join(p.root, 'c.txt'))).toBe(false);
  });

  it('refuses usage mistakes with exit 2', async () => {
    const p = await project({ 'a.txt': 'a\n' });
    expect((await run(['merge', '--root', p.root, '--state', p.state])).code).toBe(2);
    expect((await run(['merge', '--root', p.root, '--state', p.state, '--from', p.state])).code).toBe(2);
    expect((await run(['merge', '--postgres', 'postgres://x', '--workspace', 'w', '--from', 'f'])).code).toBe(2);
  });

  it('merges a fork of a sandbox kept in a SQLite file (--sandbox, --from NAME)', { timeout: 15_000 }, async () => {
    const p = await project({});
    const file = join(p.base, 'ws.db');
    const lower = createSqliteFs({ path: file, workspace: 'w' });
    await lower.writeText(await lower.resolve('/a.txt'), A);
    const store = createSqliteUpperStore({ path: file, sandbox: 'main' });
    const sandbox = await createOverlayFs({ lower, store });
    await sandbox.writeText(await sandbox.resolve('/a.txt'), edit(A, 2, 'line 2 in main'));
    await sandbox.fork({ stateDir: 'try' });
    const tryStore = createSqliteUpperStore({ path: file, sandbox: 'try' });
    const fork = await createOverlayFs({ lower, store: tryStore });
    await fork.writeText(await fork.resolve('/a.txt'), edit(edit(A, 2, 'line 2 in main'), 60, 'line 60 in try'));
    await sandbox.writeText(await sandbox.resolve('/a.txt'), edit(edit(A, 2, 'line 2 in main'), 10, 'line 10 in main'));
    // Each store took its sandbox's lock with its first write: let go, as a server does between calls.
    await store.unlock();
    await tryStore.unlock();
    const r = await run(['merge', '--sqlite', file, '--workspace', 'w', '--sandbox', 'main', '--from', 'try', '--json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toEqual({ merged: ['a.txt'], conflicts: [] });
    const again = await createOverlayFs({ lower, store: createSqliteUpperStore({ path: file, sandbox: 'main' }) });
    expect((await again.readText(await again.resolve('/a.txt'))).text).toBe(edit(edit(edit(A, 2, 'line 2 in main'), 10, 'line 10 in main'), 60, 'line 60 in try'));
  });
});
