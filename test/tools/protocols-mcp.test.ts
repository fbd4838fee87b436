import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createMcpServer } from '../../src/mcp/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, patchOutputSchema, patchTools, textEditorOutputSchema, textEditorTool } from '../../src/tools/index.js';

describe('the protocol tools over MCP', () => {
  it('serves apply_patch and the text editor with structured results', async () => {
    const fs = createMemoryFs({ cwd: '/w', files: { '/w/a.txt': 'one\ntwo\n' } });
    const server = createMcpServer({ fs, policy: createObservationPolicy(), tools: [fsTools(), patchTools(), textEditorTool()] });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'test', version: '0' });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;

    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(['read', 'write', 'edit', 'list', 'apply_patch', 'str_replace_based_edit_tool']);
    const view = await call('str_replace_based_edit_tool', { command: 'view', path: 'a.txt' });
    expect(view.content).toEqual([{ type: 'text', text: '1: one\n2: two' }]);
    expect(textEditorOutputSchema.safeParse(view.structuredContent).success).toBe(true);
    const patched = await call('apply_patch', { input: '*** Begin Patch\n*** Update File: a.txt\n-two\n+2\n*** End Patch' });
    expect(patched.isError).toBeFalsy();
    expect(patchOutputSchema.safeParse(patched.structuredContent).success).toBe(true);
    expect((await fs.readText(await fs.resolve('/w/a.txt'))).text).toBe('one\n2\n');
  });
});
