import { randomUUID } from 'node:crypto';
import { mkdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../../src/cli/args.js';
import { codeOf, ensureBuilt, removeTemps, runCli, serve, tempDir, textOf } from './helpers.js';

/** The CLI over a PostgreSQL workspace needs a server: CI runs this through scripts/ci-postgres.sh. */
const SERVER = process.env.DSH_FS_TEST_PG;

describe.runIf(SERVER !== undefined)('dsh-fs over PostgreSQL (DSH_FS_TEST_PG)', () => {
  beforeAll(ensureBuilt, 300_000);
  afterAll(removeTemps);
  const pgArgs = (workspace: string) => ['--postgres', SERVER!, '--workspace', workspace];

  it('serve records every tool call to dsh_fs_audit; log reads it back', async () => {
    const workspace = `cli-audit-${randomUUID()}`;
    const served = await serve([...pgArgs(workspace)]);
    try {
      await served.call('write', { file_path: '/a.txt', content: 'a\n' });
      await served.call('edit', { file_path: '/a.txt', old_string: 'zzz', new_string: 'b' });
    } finally {
      await served.close();
    }
    const r = await runCli(['log', ...pgArgs(workspace), '--json']);
    expect(r.code).toBe(EXIT_OK);
    const records = (JSON.parse(r.stdout) as { records: { tool: string; outcome: string; paths: { path: string }[] }[] }).records;
    expect(records.map((x) => [x.tool, x.outcome, x.paths.map((p) => p.path)])).toEqual([
      ['write', 'ok', ['a.txt']],
      ['edit', 'FS_EDIT_NOT_FOUND', ['a.txt']],
    ]);
    const text = await runCli(['log', ...pgArgs(workspace), '--sandbox', workspace, '--tool', 'edit']);
    expect(text.stdout).toMatch(/^\S+Z {2}mcp-session-\S+ {2}edit {2}FS_EDIT_NOT_FOUND {2}a\.txt ([\w-]{10})→\1\n$/);
  });

  it('a reason given by reject --hunk in one process reaches the agent served by another, once', async () => {
    const workspace = `cli-feedback-${randomUUID()}`;
    const served = await serve([...pgArgs(workspace)]);
    try {
      await served.call('write', { file_path: '/a.txt', content: 'one\ntwo\n' });
      const listed = await runCli(['review', ...pgArgs(workspace), '--json']);
      expect(listed.code, listed.stderr).toBe(EXIT_OK);
      const [a] = (JSON.parse(listed.stdout) as { files: { id: string }[] }).files;
      const rejected = await runCli(['reject', ...pgArgs(workspace), '--hunk', a!.id, '--reason', 'not this file']);
      expect(rejected.code, rejected.stderr).toBe(EXIT_OK);
      const next = textOf(await served.call('list', { path: '/' }));
      expect(next).toContain('Note: a reviewer rejected your change to a.txt and reverted it in the sandbox: not this file');
      expect(textOf(await served.call('list', { path: '/' }))).not.toContain('reviewer');
    } finally {
      await served.close();
    }
  });

  it('import, a sandboxed serve, review from another process (status, diff, commit, discard), export', async () => {
    const workspace = `cli-${randomUUID()}`;
    const src = await tempDir();
    await mkdir(join(src, 'src'));
    await writeFile(join(src, 'src/app.ts'), 'export const v = 1;\n');
    await writeFile(join(src, 'notes.txt'), 'one\ntwo\n');
    await symlink('src/app.ts', join(src, 'app-link'));

    const imported = await runCli(['import', '--root', src, ...pgArgs(workspace), '--json']);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(EXIT_OK);
    expect(JSON.parse(imported.stdout)).toEqual({ files: 2, directories: 1, symlinks: 1, bytes: 28, skipped: [] });
    // A second import into the now non-empty workspace is refused, unless --overwrite.
    const again = await runCli(['import', '--root', src, ...pgArgs(workspace)]);
    expect(again.code).toBe(EXIT_FAILURE);
    expect(again.stderr).toMatch(/not empty.*\(FS_ALREADY_EXISTS\)/);
    expect((await runCli(['import', '--root', src, ...pgArgs(workspace), '--overwrite'])).stdout).toMatch(/^Imported 2 files \(28 bytes\), 1 directory, 1 symbolic link from /);

    const served = await serve([...pgArgs(workspace)]);
    try {
      expect(served.stderr()).toContain(`sandbox "${workspace}" in the database`);
      await served.call('read', { file_path: '/notes.txt' });
      const edit = await served.call('edit', { file_path: '/notes.txt', old_string: 'two', new_string: '2' });
      expect(edit.isError).toBeFalsy();
      await served.call('write', { file_path: '/new/file.md', content: '# new\n' });

      // Review from another process while the server runs.
      const status = await runCli(['status', ...pgArgs(workspace)]);
      expect(status.stdout).toBe('A new/file.md\nM notes.txt\n');
      const diff = await runCli(['diff', ...pgArgs(workspace), '--color', 'never', 'notes.txt']);
      expect(diff.stdout).toContain('-two\n+2\n');
      expect(diff.stdout).not.toContain('file.md');
      const commit = await runCli(['commit', ...pgArgs(workspace), '--json', '/notes.txt']);
      expect(commit.code).toBe(EXIT_OK);
      expect(JSON.parse(commit.stdout)).toEqual({ committed: [{ path: 'notes.txt', kind: 'modified' }], conflicts: [], failed: [], ignored: [] });

      // The server sees the commit: the file is no longer a change, and further edits go on.
      const read = await served.call('read', { file_path: '/notes.txt' });
      expect(textOf(read)).toContain('2');
      const discard = await runCli(['discard', ...pgArgs(workspace), '--json']);
      expect(JSON.parse(discard.stdout)).toEqual({ discarded: [{ path: 'new/file.md', kind: 'added' }] });
      const gone = await served.call('read', { file_path: '/new/file.md' });
      expect(codeOf(gone)).toBe('FS_NOT_FOUND');
      // The text report names the workspace the changes landed in.
      await served.call('write', { file_path: '/late.md', content: 'late\n' });
      const committed = await runCli(['commit', ...pgArgs(workspace)]);
      expect(committed.stdout).toMatch(new RegExp(`^Committed 1 change to workspace "${workspace}":`));
    } finally {
      await served.close();
    }
    expect((await runCli(['status', ...pgArgs(workspace)])).stdout).toBe('No changes.\n');

    const out = join(await tempDir(), 'out');
    const exported = await runCli(['export', ...pgArgs(workspace), '--root', out]);
    expect(exported.code).toBe(EXIT_OK);
    expect(exported.stdout).toMatch(/^Exported 3 files/);
    expect(await readFile(join(out, 'late.md'), 'utf8')).toBe('late\n');
    expect(await readFile(join(out, 'notes.txt'), 'utf8')).toBe('one\n2\n');
    expect(await readlink(join(out, 'app-link'))).toBe('src/app.ts');
    const refused = await runCli(['export', ...pgArgs(workspace), '--root', out]);
    expect(refused.code).toBe(EXIT_FAILURE);
    expect(refused.stderr).toContain('FS_ALREADY_EXISTS');
  }, 120_000);

  it('serve --mode direct writes to the workspace; a separate --sandbox name keeps its own changes', async () => {
    const workspace = `cli-${randomUUID()}`;
    const direct = await serve([...pgArgs(workspace), '--mode', 'direct']);
    try {
      await direct.call('write', { file_path: '/a.txt', content: 'a\n' });
    } finally {
      await direct.close();
    }
    const sandboxed = await serve([...pgArgs(workspace), '--sandbox', 'review-1']);
    try {
      await sandboxed.call('read', { file_path: '/a.txt' });
      await sandboxed.call('write', { file_path: '/a.txt', content: 'A\n' });
    } finally {
      await sandboxed.close();
    }
    expect((await runCli(['status', ...pgArgs(workspace)])).stdout).toBe('No changes.\n');
    expect((await runCli(['status', ...pgArgs(workspace), '--sandbox', 'review-1'])).stdout).toBe('M a.txt\n');
    const out = join(await tempDir(), 'out');
    await runCli(['export', ...pgArgs(workspace), '--root', out]);
    expect(await readFile(join(out, 'a.txt'), 'utf8')).toBe('a\n');
  }, 120_000);

  it('usage errors: --postgres without --workspace, with --root, --workspace without --postgres', async () => {
    expect((await runCli(['status', '--postgres', SERVER!])).code).toBe(EXIT_USAGE);
    const both = await runCli(['serve', ...pgArgs('x'), '--root', '.']);
    expect(both.code).toBe(EXIT_USAGE);
    expect(both.stderr).toContain('--root does not go with --postgres');
    expect((await runCli(['diff', '--root', '.', '--workspace', 'x'])).stderr).toContain('--workspace goes with --postgres');
  });
});

describe('dsh-fs over PostgreSQL: a server that cannot be reached', () => {
  beforeAll(ensureBuilt, 300_000);
  it('is a failure naming the cause (FS_IO_ERROR), not a crash', async () => {
    const r = await runCli(['status', '--postgres', 'postgresql://nobody@127.0.0.1:1/none', '--workspace', 'w']);
    expect(r.code).toBe(EXIT_FAILURE);
    expect(r.stderr).toMatch(/no connection to PostgreSQL.*\(FS_IO_ERROR\)/);
  }, 60_000);
});
