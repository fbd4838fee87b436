import { rm } from 'node:fs/promises';
import type Anthropic from '@anthropic-ai/sdk';
import { Runner, Usage, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type HarnessContext, type HarnessPlugin } from '../../src/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, textEditorTool } from '../../src/tools/index.js';
import { snippetsOf, writeSnippets } from './snippets.js';

// The loops of docs/tools.md, run as written against scripted models: fake clients answering with
// canned responses of the real shapes, over the memory backend.

let dir: string | undefined;
const modules = new Map<string, Record<string, unknown>>();
beforeAll(async () => {
  const named = (await snippetsOf('docs/tools.md')).filter((s) => s.name !== undefined);
  const written = await writeSnippets(named);
  dir = written.dir;
  for (const [s, path] of written.paths) modules.set(s.name!, (await import(path)) as Record<string, unknown>);
});
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function project(...plugins: HarnessPlugin[]): HarnessContext {
  const fs = createMemoryFs({ files: { '/proj/src/app.ts': 'export const answer = 41;\nexport const name = "app";\n' }, cwd: '/proj' });
  return createHarness({ fs, plugins: [createObservationPolicy(), ...plugins] });
}

const text = async (ctx: HarnessContext, path: string) => (await ctx.fs.readText(await ctx.fs.resolve(path))).text;

const UPDATE = '@@\n-export const answer = 41;\n+export const answer = 42;\n export const name = "app";\n';

/** A client whose `create` answers from a script and records each request (copied: the loop mutates its arrays). */
function scripted<T>(script: T[]) {
  const requests: any[] = [];
  const create = async (params: unknown) => {
    requests.push(structuredClone(params));
    const next = script.shift();
    if (next === undefined) throw new Error('the script ran out');
    return next;
  };
  return { requests, create };
}

describe('docs/tools.md: Responses API loop with the built-in apply_patch', () => {
  it('reads, is refused a blind patch, then patches and creates files', async () => {
    const ctx = project(fsTools());
    const call = (call_id: string, operation: object) => ({ type: 'apply_patch_call', id: `apc_${call_id}`, call_id, status: 'completed', operation });
    const { requests, create } = scripted([
      { id: 'r1', object: 'response', output_text: '', output: [call('c0', { type: 'update_file', path: 'src/app.ts', diff: UPDATE })] },
      { id: 'r2', object: 'response', output_text: '', output: [{ type: 'function_call', id: 'fc1', call_id: 'c1', name: 'read', arguments: '{"file_path":"src/app.ts"}', status: 'completed' }] },
      { id: 'r3', object: 'response', output_text: '', output: [call('c2', { type: 'update_file', path: 'src/app.ts', diff: UPDATE }), call('c3', { type: 'create_file', path: 'docs/new.md', diff: '+# New\n+text\n' })] },
      { id: 'r4', object: 'response', output_text: 'Done.', output: [{ type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] }] },
    ]);
    const run = modules.get('responses-loop')!.runResponsesLoop as (c: Pick<OpenAI, 'responses'>, ctx: HarnessContext, task: string) => Promise<string>;
    expect(await run({ responses: { create } } as unknown as Pick<OpenAI, 'responses'>, ctx, 'Make the answer 42.')).toBe('Done.');

    expect(requests[0].tools).toContainEqual({ type: 'apply_patch' });
    expect(requests[0].tools.map((t: { name?: string }) => t.name)).toContain('read');
    const outputs = requests[3].input.filter((i: { type?: string }) => i.type === 'apply_patch_call_output');
    expect(outputs.map((o: { call_id: string; status: string }) => [o.call_id, o.status])).toEqual([['c0', 'failed'], ['c2', 'completed'], ['c3', 'completed']]);
    expect(outputs[0].output).toMatch(/^Error: /);
    expect(await text(ctx, 'src/app.ts')).toBe('export const answer = 42;\nexport const name = "app";\n');
    expect(await text(ctx, 'docs/new.md')).toBe('# New\ntext\n');
  });
});

describe('docs/tools.md: Messages API loop with the native text editor', () => {
  it('declares the tool natively, views, replaces and creates', async () => {
    const ctx = project(fsTools(), textEditorTool());
    const use = (id: string, input: object) => ({ type: 'tool_use', id, name: 'str_replace_based_edit_tool', input });
    const message = (content: object[], stop_reason: string) => ({ id: 'msg', type: 'message', role: 'assistant', model: 'claude', content, stop_reason, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } });
    const { requests, create } = scripted([
      message([{ type: 'text', text: 'Looking.' }, use('t1', { command: 'view', path: 'src/app.ts' })], 'tool_use'),
      message(
        [use('t2', { command: 'str_replace', path: 'src/app.ts', old_str: 'answer = 41', new_str: 'answer = 42' }), use('t3', { command: 'create', path: 'notes.md', file_text: 'changed the answer\n' }), use('t4', { command: 'str_replace', path: 'src/app.ts', old_str: 'nowhere', new_str: 'x' })],
        'tool_use',
      ),
      message([{ type: 'text', text: 'Done.' }], 'end_turn'),
    ]);
    const run = modules.get('anthropic-loop')!.runClaudeLoop as (c: Pick<Anthropic, 'messages'>, ctx: HarnessContext, task: string) => Promise<void>;
    await run({ messages: { create } } as unknown as Pick<Anthropic, 'messages'>, ctx, 'Make the answer 42.');

    expect(requests[0].tools).toContainEqual({ type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' });
    const results = requests[2].messages.at(-1).content as { tool_use_id: string; is_error?: boolean; content: { text: string }[] }[];
    expect(results.map((r) => [r.tool_use_id, r.is_error === true])).toEqual([['t2', false], ['t3', false], ['t4', true]]);
    expect(results[2]!.content[0]!.text).toMatch(/^Error: /);
    expect(requests[1].messages[2].content[0].content[0].text).toContain('export const answer = 41;');
    expect(await text(ctx, 'src/app.ts')).toBe('export const answer = 42;\nexport const name = "app";\n');
    expect(await text(ctx, 'notes.md')).toBe('changed the answer\n');
  });
});

describe('docs/tools.md: Agents SDK Editor via createPatchEditor', () => {
  it('an agent run patches through the policy', async () => {
    const ctx = project(fsTools());
    const outputs: ModelResponse['output'][] = [
      [{ type: 'apply_patch_call', callId: 'p0', status: 'completed', operation: { type: 'update_file', path: 'src/app.ts', diff: UPDATE } }],
      [{ type: 'function_call', callId: 'f1', name: 'read', arguments: '{"file_path":"src/app.ts"}', status: 'completed' }],
      [{ type: 'apply_patch_call', callId: 'p1', status: 'completed', operation: { type: 'update_file', path: 'src/app.ts', diff: UPDATE } }],
      [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.' }] }],
    ];
    const requests: ModelRequest[] = [];
    const model: Model = {
      async getResponse(request) {
        requests.push(request);
        const output = outputs.shift();
        if (output === undefined) throw new Error('the script ran out');
        return { usage: new Usage(), output };
      },
      getStreamedResponse() {
        throw new Error('not scripted');
      },
    };
    const agent = (modules.get('agents-editor')!.patchingAgent as (ctx: HarnessContext) => Parameters<Runner['run']>[0])(ctx);
    const result = await new Runner({ model, tracingDisabled: true }).run(agent, 'Make the answer 42.');
    expect(result.finalOutput).toBe('Done.');
    const results = JSON.stringify(requests.at(-1)!.input);
    expect(results).toContain('"callId":"p0","status":"failed"');
    expect(await text(ctx, 'src/app.ts')).toBe('export const answer = 42;\nexport const name = "app";\n');
  });
});
