import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_USAGE } from '../../src/cli/args.js';
import type { Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { createSqliteFs } from '../../src/backends/sqlite/index.js';
import { codeOf, ensureBuilt, removeTemps, runCli, serve, tempDir, textOf } from './helpers.js';

/** The CLI in this process, its output captured. */
async function runHere(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (s: string) => (sink(s), true) }) as unknown as Io['stdout'];
  const io: Io = { stdout: stream((s) => (stdout += s)), stderr: stream((s) => (stderr += s)), env: {}, cwd: process.cwd() };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

describe('dsh-fs over a SQLite file', () => {
  beforeAll(ensureBuilt, 300_000);
  afterAll(removeTemps);

  it('a sandboxed serve, review from other processes (status, diff, commit, discard), the workspace changed only by the commit', async () => {
    const file = join(await tempDir(), 'ws.db');
    const ws = createSqliteFs({ path: file, workspace: 'app' });
    await ws.writeText(await ws.resolve('/notes.txt'), 'one\ntwo\n');
    const args = ['--sqlite', file, '--workspace', 'app'];

    const served = await serve(args);
    try {
      expect(served.stderr()).toContain('serving');
      await served.call('read', { file_path: '/notes.txt' });
      expect((await served.call('edit', { file_path: '/notes.txt', old_string: 'two', new_string: '2' })).isError).toBeFalsy();
      await served.call('write', { file_path: '/new/file.md', content: '# new\n' });
      // The workspace itself is untouched until the commit.
      expect((await ws.readText(await ws.resolve('/notes.txt'))).text).toBe('one\ntwo\n');

      expect((await runCli(['status', ...args])).stdout).toBe('A new/file.md\nM notes.txt\n');
      const diff = await runCli(['diff', ...args, '--color', 'never', 'notes.txt']);
      expect(diff.stdout).toContain('-two\n+2\n');
      expect(diff.stdout).not.toContain('file.md');
      const commit = await runCli(['commit', ...args, '--json', '/notes.txt']);
      expect(commit.code).toBe(EXIT_OK);
      expect(JSON.parse(commit.stdout)).toEqual({ committed: [{ path: 'notes.txt', kind: 'modified' }], conflicts: [], failed: [], ignored: [] });
      expect((await ws.readText(await ws.resolve('/notes.txt'))).text).toBe('one\n2\n');

      // The server sees the commit and the discard.
      expect(textOf(await served.call('read', { file_path: '/notes.txt' }))).toContain('2');
      const discard = await runCli(['discard', ...args, '--json']);
      expect(JSON.parse(discard.stdout)).toEqual({ discarded: [{ path: 'new/file.md', kind: 'added' }] });
      expect(codeOf(await served.call('read', { file_path: '/new/file.md' }))).toBe('FS_NOT_FOUND');
    } finally {
      await served.close();
    }
    expect((await runCli(['status', ...args])).stdout).toBe('No changes.\n');
    // Another sandbox name keeps its own changes; --mode direct writes to the workspace.
    const direct = await serve(['--sqlite', file, '--workspace', 'app', '--mode', 'direct']);
    try {
      await direct.call('write', { file_path: '/d.txt', content: 'd\n' });
    } finally {
      await direct.close();
    }
    expect((await ws.readText(await ws.resolve('/d.txt'))).text).toBe('d\n');
    await ws.close();
  }, 120_000);

  it('usage errors: --sqlite with --root or --postgres, --workspace alone', async () => {
    const both = await runHere(['status', '--sqlite', 'x.db', '--root', '.']);
    expect(both.code).toBe(EXIT_USAGE);
    expect(both.stderr).toContain('--root does not go with --sqlite');
    expect((await runHere(['status', '--sqlite', 'x.db', '--postgres', 'postgres://h/d', '--workspace', 'w'])).stderr).toContain('--sqlite and --postgres do not go together');
    expect((await runHere(['diff', '--root', '.', '--workspace', 'x'])).stderr).toContain('--workspace goes with --postgres or --sqlite');
  });
});
