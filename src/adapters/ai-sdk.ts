import { jsonSchema, tool, type JSONSchema7, type Tool as AiTool, type ToolSet } from 'ai';
import type { HarnessContext, Owner, ToolResult } from '../harness/index.js';
import { isImageValue } from '../tools/read.js';

export interface AiSdkToolsOptions {
  /** The agent session the policy tracks (default: a new session for this tool set). */
  readonly owner?: Owner;
  /** Directory for relative paths (default: the harness cwd). */
  readonly cwd?: string;
  /** Only these tools (default: every tool registered on the harness). */
  readonly names?: readonly string[];
}

/**
 * The harness's tools as AI SDK `tool()` definitions for `generateText` / `streamText`. Each call
 * runs through `ctx.tools.execute` (so through the observation policy); the step's tool output is
 * the `ToolResult`, and the model is sent its text, as `error-text` when the call failed.
 */
export function aiSdkTools(ctx: HarnessContext, options: AiSdkToolsOptions = {}): ToolSet {
  const owner: Owner = options.owner ?? {};
  const names = options.names ?? ctx.tools.list().map((t) => t.name);
  const tools: Record<string, AiTool<unknown, ToolResult>> = {};
  for (const listing of ctx.tools.list()) {
    if (!names.includes(listing.name)) continue;
    tools[listing.name] = tool<unknown, ToolResult, Record<string, never>>({
      description: listing.description,
      ...(listing.title === undefined ? {} : { title: listing.title }),
      // No validation here: the registry validates and answers with messages the model can act on.
      inputSchema: jsonSchema<unknown>(listing.inputSchema as JSONSchema7),
      execute: (input, { abortSignal }) =>
        ctx.tools.execute(listing.name, input, {
          owner,
          ...(abortSignal ? { signal: abortSignal } : {}),
          ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        }),
      toModelOutput: ({ output }) => {
        if (output.isError) return { type: 'error-text', value: output.text };
        // An image read goes to the model as the image, after the text that names it.
        if (isImageValue(output.value)) {
          return {
            type: 'content',
            value: [
              { type: 'text', text: output.text },
              { type: 'file', data: { type: 'data', data: output.value.data }, mediaType: output.value.mediaType },
            ],
          };
        }
        return { type: 'text', value: output.text };
      },
    });
  }
  return tools;
}
