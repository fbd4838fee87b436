import type { JSONSchema7, Tool as AiTool, ToolSet } from 'ai';
import { requirePeer } from '../peers.js';
import type { HarnessContext, Owner, ToolInputOf, ToolResult, ToolValueOf, ToolValues } from '../harness/index.js';
import { isImageValue } from '../harness/image.js';

export interface AiSdkToolsOptions {
  /** The agent session the policy tracks (default: a new session for this tool set). */
  readonly owner?: Owner;
  /** Directory for relative paths (default: the harness cwd). */
  readonly cwd?: string;
  /** Only these tools (default: every tool registered on the harness). */
  readonly names?: readonly string[];
}

/**
 * What `execute` reads of the SDK's call options. Declared here rather than taken from `ai`, whose
 * `ToolExecutionOptions` gained a type parameter in version 7: one declaration fits 6 and 7.
 */
export interface AiSdkCallOptions {
  readonly toolCallId: string;
  readonly abortSignal?: AbortSignal;
}

/** One harness tool as an AI SDK tool: its own arguments in, its `ToolResult` out. */
export type AiSdkTool<Name extends string> = {
  // Always set, and always a promise (the SDK's own type allows neither to be relied on).
  execute(input: ToolInputOf<Name>, options: AiSdkCallOptions): Promise<ToolResult<ToolValueOf<Name>>>;
} & AiTool<ToolInputOf<Name>, ToolResult<ToolValueOf<Name>>>;

/** The tools `aiSdkTools` returns, typed per name; pass it as `tools` to `generateText`. */
export type AiSdkToolSet<Names extends string> = { [Name in Names]: AiSdkTool<Name> };

/** The built-in tools, each present only when its plugin is registered on the harness. */
export type AiSdkDefaultToolSet = { [Name in keyof ToolValues & string]?: AiSdkTool<Name> };

/**
 * The harness's tools as AI SDK `tool()` definitions for `generateText` / `streamText`. Each call
 * runs through `ctx.tools.execute` (so through the observation policy); the step's tool output is
 * the `ToolResult`, and the model is sent its text, as `error-text` when the call failed.
 */
export function aiSdkTools<const Names extends string>(
  ctx: HarnessContext,
  options: AiSdkToolsOptions & { readonly names: readonly Names[] },
): AiSdkToolSet<Names>;
export function aiSdkTools(ctx: HarnessContext, options?: AiSdkToolsOptions): AiSdkDefaultToolSet;
export function aiSdkTools(ctx: HarnessContext, options: AiSdkToolsOptions = {}): ToolSet {
  // Loaded here, so importing this entry never needs the package, only calling it.
  const { jsonSchema } = requirePeer<typeof import('ai')>('ai', 'ai', 'aiSdkTools (dsh-fs/ai-sdk)');
  const owner: Owner = options.owner ?? {};
  const names = options.names ?? ctx.tools.list().map((t) => t.name);
  const tools: Record<string, AiTool<unknown, ToolResult>> = {};
  for (const listing of ctx.tools.list()) {
    if (!names.includes(listing.name)) continue;
    // A plain object, not `tool()` (an identity function whose type parameters differ between 6 and 7).
    const definition: AiTool<unknown, ToolResult> = {
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
        // An image read goes to the model as the image, after the text that names it. `image-data`
        // is the part both 6 and 7 take (7 prefers a `file` part, which 6 does not know).
        if (isImageValue(output.value)) {
          return {
            type: 'content',
            value: [
              { type: 'text', text: output.text },
              { type: 'image-data', data: output.value.data, mediaType: output.value.mediaType },
            ],
          };
        }
        return { type: 'text', value: output.text };
      },
    };
    tools[listing.name] = definition;
  }
  return tools;
}
