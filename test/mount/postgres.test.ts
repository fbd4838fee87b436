import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresFs } from '../../src/backends/postgres/index.js';
import { codeOf, ensureBuilt, removeTemps, runCli, serve, tempDir, type Served } from '../cli/helpers.js';
import { forceUnmount, fuseUnavailable, isMounted, sh, startMount } from './helpers.js';

/** `mount` and `run` over a PostgreSQL workspace need a server: run through scripts/ci-postgres.sh. */
const SERVER = process.env.DSH_FS_TEST_PG;
const why = (await fuseUnavailable()) ?? (SERVER === undefined ? 'DSH_FS_TEST_PG is not set (run through scripts/ci-postgres.sh)' : undefined);
if (why !== undefined) console.warn(`mount over PostgreSQL skipped: ${why}`);

describe.skipIf(why !== undefined)('dsh-fs mount and run over PostgreSQL', () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    await ensureBuilt();
    pool = new pg.Pool({ connectionString: SERVER, max: 2 });
  }, 300_000);
  afterAll(async () => {
    await pool?.end();
    await removeTemps();
  });
  const pgArgs = (workspace: string) => ['--postgres', SERVER!, '--workspace', workspace];

  /** A new workspace holding notes.txt (CRLF), gone.txt and src/app.ts. */
  async function workspaceWithFiles(): Promise<string> {
    const workspace = `mount-${randomUUID()}`;
    const src = await tempDir();
    await mkdir(join(src, 'src'));
    await writeFile(join(src, 'notes.txt'), 'one\r\ntwo\r\n');
    await writeFile(join(src, 'gone.txt'), 'bye\n');
    await writeFile(join(src, 'src/app.ts'), 'export const v = 1;\n');
    const r = await runCli(['import', '--root', src, ...pgArgs(workspace)]);
    expect(r.code, r.stderr).toBe(0);
    return workspace;
  }

  /** The workspace's files as the PostgreSQL backend reads them. */
  async function contents(workspace: string): Promise<Record<string, string>> {
    const fs = createPostgresFs({ client: pool, workspace });
    const out: Record<string, string> = {};
    for await (const e of fs.walk(await fs.resolve('/'))) {
      if (e.type === 'file') out[e.target.displayPath] = new TextDecoder().decode((await fs.readBytes(e.target, { maxBytes: 1 << 20 })).bytes);
    }
    return out;
  }

  const original = { '/gone.txt': 'bye\n', '/notes.txt': 'one\r\ntwo\r\n', '/src/app.ts': 'export const v = 1;\n' };
  const script = 'sed -i s/one/1/ notes.txt && echo new > src/new.txt && rm gone.txt && cat src/app.ts';

  it('run over the sandbox: the workspace is untouched until commit, status lists what the program changed', async () => {
    const workspace = await workspaceWithFiles();
    const r = await runCli(['run', ...pgArgs(workspace), '--', 'sh', '-c', script]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('export const v = 1;\n');
    expect(await contents(workspace)).toEqual(original);

    const status = await runCli(['status', ...pgArgs(workspace)]);
    expect(status.stdout, status.stderr).toBe('D gone.txt\nM notes.txt\nA src/new.txt\n');
    const commit = await runCli(['commit', ...pgArgs(workspace)]);
    expect(commit.code, commit.stderr).toBe(0);
    expect(await contents(workspace)).toEqual({ '/notes.txt': '1\r\ntwo\r\n', '/src/app.ts': 'export const v = 1;\n', '/src/new.txt': 'new\n' });
    expect((await runCli(['status', ...pgArgs(workspace)])).stdout).toBe('No changes.\n');
  });

  it('run --mode direct: the program writes the workspace itself', async () => {
    const workspace = await workspaceWithFiles();
    const r = await runCli(['run', ...pgArgs(workspace), '--mode', 'direct', '--', 'sh', '-c', script]);
    expect(r.code, r.stderr).toBe(0);
    expect(await contents(workspace)).toEqual({ '/notes.txt': '1\r\ntwo\r\n', '/src/app.ts': 'export const v = 1;\n', '/src/new.txt': 'new\n' });
  });

  it('mount: a write through the mount is in the sandbox at once (another process reviews it) and in the workspace after commit', async () => {
    const workspace = await workspaceWithFiles();
    const where = join(await tempDir(), 'mnt');
    await mkdir(where);
    const m = startMount([...pgArgs(workspace), '--sandbox', 'review', where], {});
    try {
      await m.ready;
      expect(m.stderr()).toContain(`PostgreSQL workspace "${workspace}" (sandbox "review" in the database)`);
      const w = await sh(`cd "${where}" && printf 'v2\\n' > src/app.ts && cat src/app.ts && ls`);
      expect(w.stdout, w.stderr).toBe('v2\ngone.txt\nnotes.txt\nsrc\n');
      const status = await runCli(['status', ...pgArgs(workspace), '--sandbox', 'review']);
      expect(status.stdout, status.stderr).toBe('M src/app.ts\n');
      expect((await contents(workspace))['/src/app.ts']).toBe('export const v = 1;\n');
      const commit = await runCli(['commit', ...pgArgs(workspace), '--sandbox', 'review']);
      expect(commit.code, commit.stderr).toBe(0);
      expect((await contents(workspace))['/src/app.ts']).toBe('v2\n');
      // The mount goes on after the commit, over the committed workspace.
      expect((await sh(`cat "${where}/src/app.ts"`)).stdout).toBe('v2\n');
      m.child.kill('SIGTERM');
      expect(await m.exited).toBe(0);
      expect(await isMounted(where)).toBe(false);
    } finally {
      m.child.kill('SIGKILL');
      await forceUnmount(where);
    }
  });

  it('an agent (serve) and a program (mount) on one sandbox in the database: both changes survive; a stale one is refused', async () => {
    const workspace = await workspaceWithFiles();
    const where = join(await tempDir(), 'mnt');
    await mkdir(where);
    const m = startMount([...pgArgs(workspace), where], {});
    let agent: Served | undefined;
    try {
      await m.ready;
      agent = await serve(pgArgs(workspace));
      expect((await agent.call('read', { file_path: '/src/app.ts' })).isError).toBeFalsy();
      expect((await agent.call('edit', { file_path: '/src/app.ts', old_string: '1', new_string: '2' })).isError).toBeFalsy();
      expect((await agent.call('read', { file_path: '/gone.txt' })).isError).toBeFalsy();
      const w = await sh(`cd "${where}" && echo program > new.txt && echo program > gone.txt && cat src/app.ts`);
      expect(w.stdout, w.stderr).toBe('export const v = 2;\n');
      // The agent read gone.txt before the program wrote it: its edit is stale.
      const stale = await agent.call('edit', { file_path: '/gone.txt', old_string: 'bye', new_string: 'agent' });
      expect(codeOf(stale)).toBe('FS_STALE_VERSION');
      const status = await runCli(['status', ...pgArgs(workspace)]);
      expect(status.stdout, status.stderr).toBe('M gone.txt\nA new.txt\nM src/app.ts\n');
      expect(await contents(workspace)).toEqual(original);
      expect((await sh(`cat "${where}/gone.txt"`)).stdout).toBe('program\n');
    } finally {
      await agent?.close();
      m.child.kill('SIGTERM');
      await m.exited;
      await forceUnmount(where);
    }
  });

  it('refuses what does not go with --postgres', async () => {
    const fork = await runCli(['run', ...pgArgs('w'), '--fork', '/tmp/x', '--', 'true']);
    expect(fork.code).toBe(2);
    expect(fork.stderr).toContain('--fork does not go with --postgres');
    const root = await runCli(['mount', ...pgArgs('w'), '--root', '/tmp', '/tmp']);
    expect(root.code).toBe(2);
    expect(root.stderr).toContain('--root does not go with --postgres');
  });
});
