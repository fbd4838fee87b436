import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createMcpServer } from '../../src/mcp/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import {
  deleteOutputSchema,
  editOutputSchema,
  fsTools,
  globOutputSchema,
  grepOutputSchema,
  listOutputSchema,
  moveDeleteTools,
  moveOutputSchema,
  readOutputSchema,
  searchTools,
  writeOutputSchema,
} from '../../src/tools/index.js';

async function connect(options: { destructive?: boolean; owner?: string; tools?: Parameters<typeof createMcpServer>[0]['tools'] } = {}) {
  const fs = createMemoryFs({ cwd: '/w', files: { '/w/a.txt': 'one\ntwo\n', '/w/src/b.ts': 'export const two = 2;\n' } });
  const policy = createObservationPolicy();
  const server = createMcpServer({ fs, policy, version: '1.2.3', ...options });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { fs, client, call, policy };
}

describe('createMcpServer (dsh-fs/mcp)', () => {
  it('lists every tool with a title, annotations and input/output schemas without $schema', async () => {
    const { client } = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'dsh-fs', version: '1.2.3' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t.title])).toEqual([
      ['read', 'Read file'],
      ['write', 'Write file'],
      ['edit', 'Edit file'],
      ['list', 'List directory'],
      ['glob', 'Find files'],
      ['grep', 'Search file contents'],
    ]);
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(hints.read).toEqual({ title: 'Read file', readOnlyHint: true, idempotentHint: true, openWorldHint: false });
    expect(hints.write).toEqual({ title: 'Write file', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    expect(hints.edit).toEqual({ title: 'Edit file', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false });
    expect(hints.glob).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
    expect(hints.grep).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
    for (const t of tools) {
      expect(t.inputSchema).not.toHaveProperty('$schema');
      expect(t.outputSchema, t.name).toMatchObject({ type: 'object' });
      // read's is a union (text or image); each shape is closed.
      const shapes = (t.outputSchema as { anyOf?: unknown[] }).anyOf ?? [t.outputSchema];
      for (const shape of shapes) expect(shape, t.name).toMatchObject({ type: 'object', additionalProperties: false });
      expect(t.outputSchema).not.toHaveProperty('$schema');
    }
  });

  it('marks the mutating tools non-destructive when asked (a reviewed sandbox)', async () => {
    const { client } = await connect({ destructive: false });
    const { tools } = await client.listTools();
    expect(tools.filter((t) => !t.annotations?.readOnlyHint).map((t) => t.annotations?.destructiveHint)).toEqual([false, false]);
  });

  it("returns structuredContent that matches each tool's outputSchema", async () => {
    const { client, call } = await connect();
    await client.listTools(); // the client checks structuredContent against the listed outputSchema from now on
    const results = {
      read: await call('read', { file_path: 'a.txt' }),
      write: await call('write', { file_path: 'new.txt', content: 'x' }),
      edit: await call('edit', { file_path: 'a.txt', old_string: 'one', new_string: 'uno' }),
      glob: await call('glob', { pattern: '*.ts' }),
      grep: await call('grep', { pattern: 'two' }),
    };
    const schemas = { read: readOutputSchema, write: writeOutputSchema, edit: editOutputSchema, glob: globOutputSchema, grep: grepOutputSchema };
    for (const [name, result] of Object.entries(results)) {
      expect(result.isError, name).toBeFalsy();
      expect(schemas[name as keyof typeof schemas].safeParse(result.structuredContent).success, name).toBe(true);
    }
    expect(results.grep.structuredContent).toMatchObject({ matches: [{ path: '/w/a.txt', line: 2 }, { path: '/w/src/b.ts', line: 1 }] });
  });

  it('serves list, move and delete with outputSchemas their structuredContent follows, and hints for each', async () => {
    const { client, call } = await connect({ tools: [fsTools(), searchTools(), moveDeleteTools()] });
    const { tools } = await client.listTools();
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(hints.list).toEqual({ title: 'List directory', readOnlyHint: true, idempotentHint: true, openWorldHint: false });
    expect(hints.move).toEqual({ title: 'Move file', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false });
    expect(hints.delete).toEqual({ title: 'Delete file', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    const list = await call('list', {});
    expect(listOutputSchema.safeParse(list.structuredContent).success).toBe(true);
    const move = await call('move', { from_path: 'src/b.ts', to_path: 'lib/b.ts' });
    expect(move.isError, JSON.stringify(move.content)).toBeFalsy();
    expect(moveOutputSchema.safeParse(move.structuredContent).success).toBe(true);
    await call('read', { file_path: 'a.txt' });
    const del = await call('delete', { file_path: 'a.txt' });
    expect(del.isError, JSON.stringify(del.content)).toBeFalsy();
    expect(deleteOutputSchema.safeParse(del.structuredContent).success).toBe(true);
    const refused = await call('delete', { file_path: 'lib/b.ts', nonsense: 1 });
    expect(refused.isError).toBe(true);
  });

  it('answers an unknown tool with a JSON-RPC error, and bad arguments or refusals with a tool error result', async () => {
    const { call } = await connect();
    await expect(call('delete', {})).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('unknown tool "delete"; available tools: read, write, edit, list, glob, grep') });
    const bad = await call('read', { file_path: 'a.txt', pages: 1 });
    expect(bad).toMatchObject({ isError: true, _meta: { 'dsh-fs/error': { name: 'FsError', code: 'FS_INVALID_ARGUMENT' } } });
    const blind = await call('write', { file_path: 'a.txt', content: 'mine' });
    expect(blind).toMatchObject({ isError: true, _meta: { 'dsh-fs/error': { code: 'FS_NOT_OBSERVED' } } });
    expect(blind.structuredContent).toBeUndefined();
  });

  it('uses the given policy and owner, so the session can be exported', async () => {
    const { call, policy } = await connect({ owner: 'session-1' });
    expect(JSON.stringify(policy.exportState('session-1'))).not.toContain('/w/a.txt');
    await call('read', { file_path: 'a.txt' });
    expect(JSON.stringify(policy.exportState('session-1'))).toContain('/w/a.txt');
  });
});
