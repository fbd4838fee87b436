import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { leasedFs } from '../../src/cli/lease.js';
import { createDshFsMcpServer } from '../../src/cli/serve.js';
import { openWorkspace } from '../../src/cli/workspace.js';
import { createMcpServer } from '../../src/mcp/index.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function link(server: McpServer, name = 'claude-code') {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name, version: '0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  const call = async (tool: string, args: Record<string, unknown>) => (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
  const checkpoints = async () => {
    const { contents } = await client.readResource({ uri: 'dsh-fs://checkpoints' });
    return (JSON.parse((contents[0] as { text: string }).text) as { checkpoints: { id: number; owner?: string; source?: string; paths: string[] }[] }).checkpoints;
  };
  return { client, call, checkpoints };
}

async function sandbox(): Promise<OverlayFileSystem> {
  return createOverlayFs({ lower: createMemoryFs({ cwd: '/w', files: { '/w/a.txt': 'one\n' } }) });
}

describe('MCP over a sandbox: checkpoints and rewind', () => {
  it('lists the checkpoints as a resource; each served change carries tool and client labels', async () => {
    const fs = await sandbox();
    const { client, call, checkpoints } = await link(createMcpServer({ fs }));
    const { resources } = await client.listResources();
    expect(resources).toMatchObject([{ uri: 'dsh-fs://checkpoints', name: 'checkpoints', mimeType: 'application/json' }]);
    expect(await checkpoints()).toEqual([]);
    await call('read', { file_path: 'a.txt' });
    expect((await call('edit', { file_path: 'a.txt', old_string: 'one', new_string: 'uno' })).isError).toBeFalsy();
    expect((await call('write', { file_path: 'b.txt', content: 'b' })).isError).toBeFalsy();
    expect(await checkpoints()).toMatchObject([
      { id: 1, owner: 'claude-code', source: 'tool:edit', paths: ['/w/a.txt'] },
      { id: 2, owner: 'claude-code', source: 'tool:write', paths: ['/w/b.txt'] },
    ]);
    expect(fs.checkpoints()).toEqual(await checkpoints());
  });

  it('serves no rewind tool unless asked; with rewindTool it rewinds everything or some paths', async () => {
    const off = await link(createMcpServer({ fs: await sandbox() }));
    expect((await off.client.listTools()).tools.map((t) => t.name)).not.toContain('rewind');

    const fs = await sandbox();
    const { client, call } = await link(createMcpServer({ fs, rewindTool: true }));
    const rewind = (await client.listTools()).tools.find((t) => t.name === 'rewind');
    expect(rewind).toMatchObject({ inputSchema: { required: ['to'] }, annotations: { readOnlyHint: false, destructiveHint: true } });
    await call('write', { file_path: 'b.txt', content: 'b1' });
    await call('read', { file_path: 'a.txt' });
    await call('write', { file_path: 'a.txt', content: 'a2' });
    await call('write', { file_path: 'b.txt', content: 'b2' });
    const some = await call('rewind', { to: 1, paths: ['b.txt'] });
    expect(some.isError, JSON.stringify(some.content)).toBeFalsy();
    expect(some.structuredContent).toEqual({ to: 1, paths: ['/w/b.txt'], checkpoint: 4 });
    expect((await fs.readText(await fs.resolve('/w/b.txt'))).text).toBe('b1');
    expect((await fs.readText(await fs.resolve('/w/a.txt'))).text).toBe('a2');
    expect(fs.checkpoints().at(-1)).toMatchObject({ id: 4, owner: 'claude-code', source: 'tool:rewind' });
    const all = await call('rewind', { to: 1 });
    expect(all.content).toEqual([{ type: 'text', text: 'Rewound the sandbox to checkpoint 1 (recorded as checkpoint 5).' }]);
    expect((await fs.readText(await fs.resolve('/w/a.txt'))).text).toBe('one\n');
    const unknown = await call('rewind', { to: 99 });
    expect(unknown).toMatchObject({ isError: true, _meta: { 'dsh-fs/error': { code: 'FS_NOT_FOUND' } } });
    expect(await call('rewind', { to: 0 })).toMatchObject({ isError: true, _meta: { 'dsh-fs/error': { code: 'FS_INVALID_ARGUMENT' } } });
  });

  it('serves neither the resource nor the tool over a filesystem without checkpoints', async () => {
    const { client } = await link(createMcpServer({ fs: createMemoryFs({ cwd: '/w' }), rewindTool: true }));
    expect(client.getServerCapabilities()?.resources).toBeUndefined();
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('rewind');
  });

  it('dsh-fs serve (its server over a sandbox workspace): the resource, the labels and the rewind tool', async () => {
    const base = await mkdtemp(join(tmpdir(), 'dsh-mcp-history-'));
    dirs.push(base);
    const root = join(base, 'root');
    await mkdir(root);
    await writeFile(join(root, 'a.txt'), 'one\n');
    const workspace = await openWorkspace({ root, mode: 'sandbox', stateDir: join(base, 'state') });
    const { server, idle } = await createDshFsMcpServer(workspace, { version: '0', rewindTool: true });
    const { call, checkpoints } = await link(server, 'cursor');
    await call('write', { file_path: 'b.txt', content: 'b' });
    await call('write', { file_path: 'c.txt', content: 'c' });
    expect(await checkpoints()).toMatchObject([
      { id: 1, owner: 'cursor', source: 'tool:write' },
      { id: 2, owner: 'cursor', source: 'tool:write' },
    ]);
    expect((await call('rewind', { to: 1 })).isError).toBeFalsy();
    await idle();
    const reopened = await createOverlayFs({ lower: createLocalFs({ root }), stateDir: join(base, 'state') });
    expect(reopened.checkpoints().at(-1)).toMatchObject({ id: 3, owner: 'cursor', source: 'tool:rewind', paths: [join(root, 'c.txt')] });
  });

  it('a mount labels its changes (source "mount" or the command run)', async () => {
    const fs = await sandbox();
    const workspace = { mode: 'sandbox' as const, root: '/w', stateDir: undefined, use: <T>(fn: (f: typeof fs) => Promise<T>) => fn(fs) };
    const leased = leasedFs(workspace, fs, { source: 'run: make test' });
    await leased.writeText(await leased.resolve('/w/b.txt'), 'b');
    leased.close();
    expect(fs.checkpoints()).toMatchObject([{ id: 1, source: 'run: make test', paths: ['/w/b.txt'] }]);
    expect(fs.checkpoints()[0]).not.toHaveProperty('owner');
  });
});
