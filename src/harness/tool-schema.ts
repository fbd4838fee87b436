import { z } from 'zod';

/** What a tool does to its environment, as MCP clients and approval prompts read it. */
export interface ToolHints {
  /** Never changes a file. */
  readonly readOnlyHint?: boolean;
  /** May replace or remove content (meaningful when not read-only). */
  readonly destructiveHint?: boolean;
  /** Repeating a call with the same arguments changes nothing more. */
  readonly idempotentHint?: boolean;
}

/** A JSON Schema object (draft 2020-12, without `$schema`). */
export type JsonSchema = Record<string, unknown>;

/** A tool as `list()` and the MCP server describe it (`inputSchema`, camel case, as MCP and the AI SDK spell it). */
export interface ToolListing {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly hints?: ToolHints;
}

/** What a listing is made of: a tool's description and schemas. */
export interface ListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly schema: z.ZodType;
  readonly outputSchema?: z.ZodType;
  readonly hints?: ToolHints;
}

/** A tool as `list()` gives it. */
export function toolListing(tool: ListedTool): ToolListing {
  return {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: tool.description,
    inputSchema: toJsonSchema(tool.schema),
    ...(tool.outputSchema === undefined ? {} : { outputSchema: objectTyped(toJsonSchema(tool.outputSchema, 'output')) }),
    ...(tool.hints === undefined ? {} : { hints: { ...tool.hints } }),
  };
}

/**
 * MCP wants an output schema of `type: "object"` at the top; a union of object shapes (read's
 * text or image) says so beside its `anyOf`.
 */
function objectTyped(json: JsonSchema): JsonSchema {
  const branches = json.anyOf ?? json.oneOf;
  if (json.type !== undefined || !Array.isArray(branches)) return json;
  return branches.every((b) => (b as JsonSchema).type === 'object') ? { type: 'object', ...json } : json;
}

/**
 * A tool schema as JSON Schema for LLM APIs: input mode (defaults optional), no `$schema`. An
 * optional property that also accepts `null` is shown without the null branch: leaving it out
 * is the way to omit it, and null is still accepted.
 */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  if (io === 'input') dropNullBranches(json);
  return json;
}

function dropNullBranches(json: JsonSchema): void {
  const props = json.properties as Record<string, JsonSchema> | undefined;
  if (props === undefined) return;
  const required = new Set((json.required as string[] | undefined) ?? []);
  for (const [key, prop] of Object.entries(props)) {
    if (required.has(key)) continue;
    if (Array.isArray(prop.type) && prop.type.includes('null')) {
      const types = (prop.type as unknown[]).filter((t) => t !== 'null');
      props[key] = { ...prop, type: types.length === 1 ? types[0] : types };
      continue;
    }
    if (!Array.isArray(prop.anyOf)) continue;
    const branches = (prop.anyOf as JsonSchema[]).filter((b) => b.type !== 'null');
    if (branches.length !== 1 || branches.length === prop.anyOf.length) continue;
    const { anyOf: _drop, ...rest } = prop;
    props[key] = { ...branches[0], ...rest };
  }
}
