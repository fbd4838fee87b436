// Compiled by `tsc --noEmit -p .` and by test/docs/snippets.test.ts: an assignment here stops
// compiling when a definition or result drifts from the shape the real SDK accepts.
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { Tool as AiTool, ToolSet } from 'ai';
import { createHarness, type ToolResult } from 'dsh-fs';
import { aiSdkTools } from 'dsh-fs/ai-sdk';
import { createMemoryFs } from 'dsh-fs/memory';
import { createObservationPolicy } from 'dsh-fs/observation-policy';
import { fsTools, patchTools, searchTools, textEditorTool, toolDefinitions, toolResultContent, type PatchValue, type ReadResultValue, type WriteValue } from 'dsh-fs/tools';

export const anthropicTools: Anthropic.Messages.ToolUnion[] = toolDefinitions({ format: 'anthropic', patch: true });
export const anthropicWithEditor: Anthropic.Messages.ToolUnion[] = toolDefinitions({ format: 'anthropic', textEditor: { maxCharacters: 8000 } });
export const responsesTools: OpenAI.Responses.FunctionTool[] = toolDefinitions({ format: 'openai-responses', patch: true });
export const responsesToolParam: OpenAI.Responses.Tool[] = [...toolDefinitions({ format: 'openai-responses' }), { type: 'apply_patch' }];
export const chatTools: OpenAI.Chat.ChatCompletionFunctionTool[] = toolDefinitions({ format: 'openai-strict' });

declare const result: ToolResult;
const { content, is_error } = toolResultContent(result, 'anthropic');
export const anthropicResult: Anthropic.Messages.ToolResultBlockParam = { type: 'tool_result', tool_use_id: 'toolu_1', content, ...(is_error ? { is_error } : {}) };
export const anthropicResultSpread: Anthropic.Messages.ToolResultBlockParam = { type: 'tool_result', tool_use_id: 'toolu_1', ...toolResultContent(result, 'anthropic') };
const chat = toolResultContent(result, 'openai');
export const chatToolMessage: OpenAI.Chat.ChatCompletionToolMessageParam = { role: 'tool', tool_call_id: 'call_1', content: chat.content };
export const chatImages: OpenAI.Chat.ChatCompletionUserMessageParam = { role: 'user', content: chat.images };

const ctx = createHarness({ fs: createMemoryFs(), plugins: [createObservationPolicy(), fsTools(), searchTools(), patchTools(), textEditorTool()] });

// Each AI SDK tool's execute takes its own arguments and resolves to its own result.
const call = { toolCallId: 'c1', messages: [], context: {} };
const tools = aiSdkTools(ctx, { names: ['read', 'apply_patch'] });
export const asAiTool: AiTool = tools.read;
export const asToolSet: ToolSet = tools;
export const all: ToolSet = aiSdkTools(ctx);
export async function callRead(): Promise<ToolResult<ReadResultValue>> {
  return tools.read.execute({ file_path: 'a.txt', offset: 1 }, call);
}
export async function callPatch(): Promise<ToolResult<PatchValue>> {
  return tools.apply_patch.execute({ input: '*** Begin Patch\n*** End Patch' }, call);
}
export async function callDefault(): Promise<ToolResult<WriteValue> | undefined> {
  return aiSdkTools(ctx).write?.execute({ file_path: 'a.txt', content: 'a' }, call);
}
// @ts-expect-error read takes file_path, not path
export const wrongArgs = () => tools.read.execute({ path: 'a.txt' }, call);

// The README's example: a read's value has its line count.
export async function readme(): Promise<number | undefined> {
  const r = await ctx.tools.execute('read', { file_path: 'a.txt' }, { owner: {} });
  if (r.isError) return undefined;
  return r.value.totalLines;
}
