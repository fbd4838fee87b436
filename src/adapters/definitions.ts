import type { JsonSchema, ToolListing, ToolResult } from '../harness/index.js';
import { isImageValue } from '../harness/image.js';
import type { ImageMediaType } from '../harness/image.js';
import { FsError } from '../seam/index.js';

/** The LLM API a definition list is shaped for. */
export type ToolFormat = 'anthropic' | 'openai' | 'openai-strict' | 'openai-responses';

/** An object schema, as Anthropic's `input_schema` must be. */
export interface AnthropicInputSchema {
  readonly type: 'object';
  readonly properties?: Record<string, unknown>;
  readonly required?: string[];
  readonly [keyword: string]: unknown;
}

/** Anthropic Messages API `tools[]` entry. */
export interface AnthropicToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly input_schema: AnthropicInputSchema;
}

/** OpenAI Chat Completions `tools[]` entry. */
export interface OpenAIToolDefinition {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: JsonSchema;
    readonly strict?: boolean;
  };
}

/** OpenAI Responses API `tools[]` entry (a function tool, flat). */
export interface OpenAIResponsesToolDefinition {
  readonly type: 'function';
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly strict: boolean;
}

/** Anthropic's own text editor tool: declared by type, its schema built into the model. */
export interface AnthropicTextEditorDefinition {
  readonly type: 'text_editor_20250728';
  readonly name: 'str_replace_based_edit_tool';
  readonly max_characters?: number;
}

export type ToolDefinitionFor<F extends ToolFormat> = F extends 'anthropic'
  ? AnthropicToolDefinition
  : F extends 'openai-responses'
    ? OpenAIResponsesToolDefinition
    : OpenAIToolDefinition;

/** A definition list entry that may also be a native tool declaration (Anthropic's text editor). */
export type ToolDeclarationFor<F extends ToolFormat> = ToolDefinitionFor<F> | (F extends 'anthropic' ? AnthropicTextEditorDefinition : never);

export const TOOL_FORMATS: readonly ToolFormat[] = ['anthropic', 'openai', 'openai-strict', 'openai-responses'];

/** The tool Anthropic declares natively (`text_editor_20250728`). */
const NATIVE_TEXT_EDITOR = 'str_replace_based_edit_tool';

export interface FormatOptions {
  /** Declare Anthropic's text editor natively (default true); the tool's `max_characters`. */
  readonly nativeTextEditor?: boolean | { readonly maxCharacters?: number };
}

/**
 * Tool listings (`ctx.tools.list()`) in one API's shape. With `openai-strict` and
 * `openai-responses`, every property is required, optional ones accept null (the tools treat null
 * as left out), and keywords outside OpenAI's strict subset are dropped (the tools still check
 * them and say what is wrong). In the `anthropic` shape `str_replace_based_edit_tool` is declared
 * natively (`{ type: 'text_editor_20250728', name }`) unless `nativeTextEditor` is false.
 */
export function formatTools<F extends ToolFormat>(listings: readonly ToolListing[], format: F, options: FormatOptions = {}): ToolDeclarationFor<F>[] {
  if (!TOOL_FORMATS.includes(format)) {
    throw new FsError('FS_INVALID_ARGUMENT', `format must be one of ${TOOL_FORMATS.join(', ')}, got ${JSON.stringify(format)}`);
  }
  const native = options.nativeTextEditor ?? true;
  return listings.map((t) => {
    if (format === 'anthropic') {
      if (native !== false && t.name === NATIVE_TEXT_EDITOR) {
        const max = typeof native === 'object' ? native.maxCharacters : undefined;
        return { type: 'text_editor_20250728', name: NATIVE_TEXT_EDITOR, ...(max === undefined ? {} : { max_characters: max }) };
      }
      return { name: t.name, description: t.description, input_schema: objectSchema(t) };
    }
    if (format === 'openai-responses') {
      return { type: 'function' as const, name: t.name, description: t.description, parameters: toOpenAIStrictSchema(t.inputSchema), strict: true };
    }
    const strict = format === 'openai-strict';
    return {
      type: 'function' as const,
      function: {
        name: t.name,
        description: t.description,
        parameters: strict ? toOpenAIStrictSchema(t.inputSchema) : t.inputSchema,
        ...(strict ? { strict: true } : {}),
      },
    };
  }) as ToolDeclarationFor<F>[];
}

function objectSchema(listing: ToolListing): AnthropicInputSchema {
  const schema = listing.inputSchema;
  if (schema.type !== 'object') {
    throw new FsError('FS_INVALID_ARGUMENT', `tool "${listing.name}": the input schema must describe an object, got type ${JSON.stringify(schema.type)}`);
  }
  return schema as AnthropicInputSchema;
}

/** Keywords OpenAI's strict mode accepts; anything else makes the API refuse the schema. */
const STRICT_KEYWORDS = new Set([
  'type', 'description', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf',
  '$defs', '$ref', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minItems', 'maxItems',
]);

/** A JSON Schema rewritten into OpenAI's strict subset (a copy; the input is not changed). */
export function toOpenAIStrictSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!STRICT_KEYWORDS.has(key)) continue;
    if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toOpenAIStrictSchema(v as JsonSchema)]));
    } else if (key === 'items' && isObject(value)) {
      out.items = toOpenAIStrictSchema(value);
    } else if (key === 'anyOf' && Array.isArray(value)) {
      out.anyOf = value.map((v) => toOpenAIStrictSchema(v as JsonSchema));
    } else if (key === '$defs' && isObject(value)) {
      out.$defs = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toOpenAIStrictSchema(v as JsonSchema)]));
    } else {
      out[key] = value;
    }
  }
  if (isObject(out.properties)) {
    const props = out.properties as Record<string, JsonSchema>;
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    for (const [key, prop] of Object.entries(props)) if (!required.has(key)) props[key] = nullable(prop);
    out.required = Object.keys(props);
    out.additionalProperties = false;
  }
  return out;
}

function nullable(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema = { ...schema, enum: [...schema.enum, null] };
  const { type } = schema;
  if (typeof type === 'string') return type === 'null' ? schema : { ...schema, type: [type, 'null'] };
  if (Array.isArray(type)) return type.includes('null') ? schema : { ...schema, type: [...type, 'null'] };
  if (Array.isArray(schema.anyOf)) {
    return schema.anyOf.some((b) => isObject(b) && b.type === 'null') ? schema : { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] };
  }
  const { description, ...rest } = schema;
  return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: 'null' }] };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A block of an Anthropic `tool_result`'s `content`. */
export type AnthropicToolResultBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly source: { readonly type: 'base64'; readonly media_type: ImageMediaType; readonly data: string } };

/** An OpenAI Chat Completions image content part (for a user message: tool messages carry text only). */
export interface OpenAIImagePart {
  readonly type: 'image_url';
  readonly image_url: { readonly url: string };
}

/** A tool result in one API's shape; see `toolResultContent`. */
export type ToolResultContentFor<F extends ToolFormat> = F extends 'anthropic'
  ? { readonly content: AnthropicToolResultBlock[]; readonly is_error?: true }
  : { readonly content: string; readonly images: OpenAIImagePart[] };

/**
 * The outcome of `ctx.tools.execute` as one API sends a tool result back to the model.
 * `anthropic`: the `content` (text, then an image block for an image read) and `is_error` of a
 * `tool_result` block. `openai` / `openai-strict`: the text for the `tool` message, and the image
 * of an image read as `image_url` parts, which Chat Completions accepts only in a user message
 * (send one after the tool messages).
 */
export function toolResultContent<F extends ToolFormat>(result: ToolResult, format: F): ToolResultContentFor<F> {
  if (!TOOL_FORMATS.includes(format)) {
    throw new FsError('FS_INVALID_ARGUMENT', `format must be one of ${TOOL_FORMATS.join(', ')}, got ${JSON.stringify(format)}`);
  }
  const image = !result.isError && isImageValue(result.value) ? result.value : undefined;
  if (format === 'anthropic') {
    const content: AnthropicToolResultBlock[] = [{ type: 'text', text: result.text }];
    if (image) content.push({ type: 'image', source: { type: 'base64', media_type: image.mediaType, data: image.data } });
    return (result.isError ? { content, is_error: true } : { content }) as ToolResultContentFor<F>;
  }
  const images: OpenAIImagePart[] = image ? [{ type: 'image_url', image_url: { url: `data:${image.mediaType};base64,${image.data}` } }] : [];
  return { content: result.text, images } as ToolResultContentFor<F>;
}
