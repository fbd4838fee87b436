import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/index.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { createMcpServer } from '../../src/mcp/index.js';
import { defaultStateDir } from '../../src/sandbox/state.js';
import { openReview } from '../../src/review/index.js';

const temps: string[] = [];
afterAll(async () => {
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});

async function project(files: Record<string, string>) {
  const base = await mkdtemp(join(tmpdir(), 'dsh-sandbox-'));
  temps.push(base);
  const root = join(base, 'project');
  await mkdir(root);
  for (const [path, text] of Object.entries(files)) await writeFile(join(root, path), text);
  return { base, root, state: join(base, 'state') };
}

async function cli(argv: readonly string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (s: string) => (sink(s), true) }) as unknown as Io['stdout'];
  const io: Io = { stdout: stream((s) => (stdout += s)), stderr: stream(() => {}), env, cwd: tmpdir() };
  return { code: await main(argv, io), stdout };
}

describe('createSandbox', () => {
  it('one call: the policy on, checkpoints labelled with the tool and owner, every call audited, the directory untouched until commit', async () => {
    const p = await project({ 'a.txt': 'one\n' });
    const sandbox = await createSandbox({ root: p.root, state: p.state });
    const owner = { id: 'agent-1' };
    const run = (name: string, args: Record<string, unknown>) => sandbox.ctx.tools.execute(name, args, { owner });

    // The policy: no blind overwrite of a file never read.
    expect(await run('write', { file_path: 'a.txt', content: 'blind\n' })).toMatchObject({ isError: true, error: { code: 'FS_NOT_OBSERVED' } });
    expect((await run('read', { file_path: 'a.txt' })).isError).toBe(false);
    expect((await run('edit', { file_path: 'a.txt', old_string: 'one', new_string: 'ONE' })).isError).toBe(false);
    expect((await run('write', { file_path: 'b.txt', content: 'new\n' })).isError).toBe(false);
    expect(sandbox.ctx.tools.list().map((t) => t.name)).toEqual(['read', 'write', 'edit', 'list', 'glob', 'grep', 'move', 'delete']);

    expect(await readFile(join(p.root, 'a.txt'), 'utf8')).toBe('one\n');
    expect(sandbox.checkpoints().map((c) => [c.source, c.owner])).toEqual([
      ['tool:edit', 'agent-1'],
      ['tool:write', 'agent-1'],
    ]);
    const records = await sandbox.auditLog!.query();
    expect(records.map((r) => [r.tool, r.outcome, r.owner])).toEqual([
      ['write', 'FS_NOT_OBSERVED', 'agent-1'],
      ['read', 'ok', 'agent-1'],
      ['edit', 'ok', 'agent-1'],
      ['write', 'ok', 'agent-1'],
    ]);

    // The command finds the same sandbox and its log.
    expect((await cli(['status', '--root', p.root, '--state', p.state])).stdout).toBe('M a.txt\nA b.txt\n');
    expect((await cli(['log', '--root', p.root, '--state', p.state])).stdout.split('\n').filter(Boolean)).toHaveLength(4);

    expect((await sandbox.changes()).map((c) => c.kind)).toEqual(['modified', 'added']);
    // Its fs is a view over the overlay, and the review entry takes it as the overlay itself.
    expect((await openReview(sandbox.fs).files()).map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
    expect(await sandbox.diff()).toContain('+ONE');
    const committed = await sandbox.commit();
    expect(committed.conflicts).toEqual([]);
    expect(await readFile(join(p.root, 'a.txt'), 'utf8')).toBe('ONE\n');
    expect(await readFile(join(p.root, 'b.txt'), 'utf8')).toBe('new\n');
    await sandbox.close();
  });

  it('keeps its state where dsh-fs serve does by default, and refuses a state inside the root', async () => {
    const p = await project({ 'a.txt': 'one\n' });
    const env = { XDG_STATE_HOME: join(p.base, 'xdg') };
    const sandbox = await createSandbox({ root: p.root, env, audit: false });
    expect(sandbox.stateDir).toBe(defaultStateDir(p.root, env));
    expect(sandbox.auditLog).toBeUndefined();
    await sandbox.ctx.tools.execute('write', { file_path: 'n.txt', content: 'x\n' }, { owner: 's' });
    expect((await cli(['status', '--root', p.root], env)).stdout).toBe('A n.txt\n');

    await expect(createSandbox({ root: p.root, state: join(p.root, 'st') })).rejects.toMatchObject({ name: 'FsError', code: 'FS_INVALID_ARGUMENT', message: expect.stringMatching(/lies inside the root/) });
    await expect(createSandbox({ root: join(p.base, 'absent') })).rejects.toMatchObject({ name: 'FsError', code: 'FS_NOT_FOUND' });
    await expect(createSandbox({ root: join(p.root, 'a.txt') })).rejects.toMatchObject({ name: 'FsError', code: 'FS_NOT_DIRECTORY' });
  });

  it('its plugins serve the same sandbox over MCP, audited, with extra tools', async () => {
    const p = await project({ 'a.txt': 'one\n' });
    const sandbox = await createSandbox({ root: p.root, state: p.state, tools: ['patch'] });
    const server = createMcpServer({ fs: sandbox.fs, policy: sandbox.policy, tools: sandbox.tools });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'test-client', version: '0' });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('apply_patch');
    await client.callTool({ name: 'write', arguments: { file_path: 'c.txt', content: 'via mcp\n' } });
    expect(sandbox.checkpoints().at(-1)).toMatchObject({ source: 'tool:write', owner: 'test-client' });
    expect((await sandbox.auditLog!.query()).map((r) => r.tool)).toEqual(['write']);
    await client.close();
    await sandbox.close();
  });
});
