import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createMcpServer } from '../../src/mcp/index.js';

async function connect() {
  const fs = createMemoryFs({ cwd: '/w', files: { '/w/a.txt': 'one\n' } });
  const server = createMcpServer({ fs });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

describe('MCP tool calls: arguments and errors as the wire carries them', () => {
  it('an argument named __proto__ is refused as an unknown key, not dropped', async () => {
    const client = await connect();
    // As JSON.parse gives it from the wire: an own key named __proto__.
    const args = JSON.parse('{"file_path":"a.txt","__proto__":{"offset":1}}') as Record<string, unknown>;
    const r = (await client.callTool({ name: 'read', arguments: args })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(r.content).toEqual([{ type: 'text', text: expect.stringMatching(/^Error: invalid arguments for read: unknown argument "__proto__"; allowed arguments: file_path, /) }]);
    // The next call, without it, runs as usual.
    expect(((await client.callTool({ name: 'read', arguments: { file_path: 'a.txt' } })) as CallToolResult).isError).toBeFalsy();
  });

  it('an unknown tool is one JSON-RPC error with the prefix once', async () => {
    const client = await connect();
    const err = await client.callTool({ name: 'chmod', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e as { code: number; message: string },
    );
    expect(err?.code).toBe(-32602);
    expect(err?.message).toBe('MCP error -32602: unknown tool "chmod"; available tools: read, write, edit, list, glob, grep');
  });
});
