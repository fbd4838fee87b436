import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolListing, ToolResult } from '../harness/index.js';
import { isImageValue } from '../harness/image.js';

/** A registry listing as MCP describes a tool. */
export function mcpTool(listing: ToolListing, destructive = true): McpTool {
  const hints = listing.hints ?? {};
  const readOnly = hints.readOnlyHint === true;
  return {
    name: listing.name,
    ...(listing.title === undefined ? {} : { title: listing.title }),
    description: listing.description,
    inputSchema: listing.inputSchema as McpTool['inputSchema'],
    ...(listing.outputSchema === undefined ? {} : { outputSchema: listing.outputSchema as McpTool['outputSchema'] }),
    annotations: {
      ...(listing.title === undefined ? {} : { title: listing.title }),
      readOnlyHint: readOnly,
      ...(readOnly ? {} : { destructiveHint: destructive && hints.destructiveHint !== false }),
      idempotentHint: hints.idempotentHint === true,
      // The tools touch only the given filesystem.
      openWorldHint: false,
    },
  };
}

/** MCP's shape of a registry result: the rendered text, plus the structured value on success. */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text' as const, text: result.text }];
  if (result.isError) {
    // The code travels in _meta, so clients that show structuredContent still show the model the text and its remedy.
    return { isError: true, content, _meta: { 'dsh-fs/error': { ...result.error } } };
  }
  // An image read: the model gets the picture itself, after the text that names it.
  if (isImageValue(result.value)) content.push({ type: 'image', data: result.value.data, mimeType: result.value.mediaType });
  return { content, structuredContent: toStructured(result.value) };
}

function toStructured(value: unknown): Record<string, unknown> {
  // Through JSON, so the client receives exactly what the protocol can carry (no undefined, no class instances).
  const plain: unknown = value === undefined ? {} : JSON.parse(JSON.stringify(value));
  return typeof plain === 'object' && plain !== null && !Array.isArray(plain) ? (plain as Record<string, unknown>) : { value: plain };
}
