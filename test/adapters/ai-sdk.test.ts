import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { aiSdkTools } from '../../src/adapters/ai-sdk.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createHarness } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, searchTools } from '../../src/tools/index.js';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** One model step that calls a tool. */
const callStep = (id: string, toolName: string, input: unknown) => ({
  content: [{ type: 'tool-call' as const, toolCallId: id, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls' as const, raw: undefined },
  usage,
  warnings: [],
});

describe('aiSdkTools (dsh-fs/ai-sdk)', () => {
  it('runs a read, a refused blind edit and an accepted edit through the policy; the model sees text or error text', async () => {
    const fs = createMemoryFs({ cwd: '/w', files: { '/w/a.txt': 'hello\n', '/w/b.txt': 'other\n' } });
    const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools(), searchTools()] });
    const tools = aiSdkTools(ctx);
    expect(Object.keys(tools)).toEqual(['read', 'write', 'edit', 'list', 'glob', 'grep']);

    const model = new MockLanguageModelV3({
      doGenerate: [
        callStep('c1', 'read', { file_path: 'a.txt' }),
        callStep('c2', 'edit', { file_path: 'b.txt', old_string: 'other', new_string: 'changed' }),
        callStep('c3', 'edit', { file_path: 'a.txt', old_string: 'hello', new_string: 'hi', replace_all: null }),
        { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
      ],
    });
    const result = await generateText({ model, tools, prompt: 'edit a.txt', stopWhen: stepCountIs(5) });
    expect(result.text).toBe('done');

    // What the model was sent back after each call.
    const last = model.doGenerateCalls.at(-1)!.prompt;
    const outputs = last.flatMap((m) => (m.role === 'tool' ? m.content : [])).map((p) => (p.type === 'tool-result' ? p.output : undefined));
    expect(outputs).toEqual([
      { type: 'text', value: '<path>/w/a.txt</path>\n<type>file</type>\n<content>\n1: hello\n\n(End of file - total 1 line)\n</content>' },
      {
        type: 'error-text',
        value: 'Error: cannot edit "/w/b.txt": it has not been read in this session — read the file first, then retry',
      },
      { type: 'text', value: 'Edited "/w/a.txt": 1 replacement; changed line 1.' },
    ]);
    // The application gets the structured results.
    const results = result.steps.flatMap((s) => s.toolResults).map((r) => r?.output as { isError: boolean; error?: { code: string } });
    expect(results.map((r) => r.isError)).toEqual([false, true, false]);
    expect(results[1]!.error?.code).toBe('FS_NOT_OBSERVED');

    expect((await fs.readText(await fs.resolve('a.txt'))).text).toBe('hi\n');
    expect((await fs.readText(await fs.resolve('b.txt'))).text).toBe('other\n');
  });

  it('sends the listing schemas as the tools\' input schemas, and can pick tools by name', async () => {
    const ctx = createHarness({ fs: createMemoryFs(), plugins: [createObservationPolicy(), fsTools(), searchTools()] });
    const tools = aiSdkTools(ctx, { names: ['read', 'grep'] });
    expect(Object.keys(tools)).toEqual(['read', 'grep']);
    const model = new MockLanguageModelV3({
      doGenerate: { content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
    });
    await generateText({ model, tools, prompt: 'x' });
    const sent = model.doGenerateCalls[0]!.tools!;
    const listing = ctx.tools.list();
    expect(sent.map((t) => t.name)).toEqual(['read', 'grep']);
    for (const t of sent) {
      if (t.type !== 'function') throw new Error('expected function tools');
      expect(t.inputSchema).toEqual(listing.find((l) => l.name === t.name)!.inputSchema);
    }
  });
});
