import { z } from 'zod';

// The shapes of the tools' structured values (MCP's outputSchema; clients check structuredContent
// against them). Kept next to the value interfaces' fields; test/tools/outputs.test.ts checks
// real values against them.

const skippedCounts = z.strictObject({
  binary: z.int(),
  tooLarge: z.int(),
  unreadable: z.int(),
  loops: z.int(),
});

export const readOutputSchema = z.strictObject({
  path: z.string(),
  version: z.string(),
  bom: z.boolean(),
  offset: z.int(),
  lines: z.array(z.strictObject({ number: z.int(), text: z.string(), fullLength: z.int().optional() })),
  totalLines: z.int(),
  cappedAtBytes: z.int().optional(),
  totalLinesAtLeast: z.literal(true).optional(),
});

export const writeOutputSchema = z.strictObject({
  path: z.string(),
  operation: z.enum(['create', 'update']),
  version: z.string(),
  bytes: z.int(),
  diff: z.string().optional(),
  diffTruncated: z.boolean().optional(),
});

export const editOutputSchema = z.strictObject({
  path: z.string(),
  version: z.string(),
  replacements: z.int(),
  replaceAll: z.boolean(),
  lines: z.array(z.strictObject({ start: z.int(), end: z.int() })),
  edits: z.int().optional(),
  diff: z.string().optional(),
  diffTruncated: z.boolean().optional(),
});

export const globOutputSchema = z.strictObject({
  dir: z.string(),
  cwd: z.string(),
  paths: z.array(z.strictObject({ path: z.string(), mtimeMs: z.number().optional() })),
  total: z.int(),
  stopped: z.strictObject({ reason: z.enum(['limit', 'entries']), at: z.int() }).optional(),
  byMtime: z.boolean(),
  spread: z.array(z.strictObject({ dir: z.string(), count: z.int() })).optional(),
  ignored: z.int(),
  skippedCounts,
});

export const grepOutputSchema = z.strictObject({
  path: z.string(),
  cwd: z.string(),
  matches: z.array(z.strictObject({ path: z.string(), line: z.int(), text: z.string(), lineTruncated: z.boolean() })),
  truncated: z.union([z.literal(false), z.enum(['matches', 'files'])]),
  filesSearched: z.int(),
  skippedCounts,
  maxFileBytes: z.int(),
});

export const moveOutputSchema = z.strictObject({
  from: z.string(),
  to: z.string(),
  type: z.enum(['file', 'directory']),
  version: z.string().optional(),
  replaced: z.boolean(),
});

export const deleteOutputSchema = z.strictObject({
  path: z.string(),
  version: z.string(),
  bytes: z.int(),
});

export const listOutputSchema = z.strictObject({
  path: z.string(),
  entries: z.array(
    z.strictObject({
      path: z.string(),
      type: z.enum(['file', 'directory', 'other']),
      depth: z.int(),
      size: z.int().optional(),
      link: z.boolean().optional(),
      notExpanded: z.strictObject({ reason: z.enum(['depth', 'limit']), entries: z.int() }).optional(),
    }),
  ),
  total: z.int(),
  omitted: z.int(),
  rootOmitted: z.int(),
  ignored: z.int(),
  maxDepth: z.int(),
  stopped: z.strictObject({ scanned: z.int() }).optional(),
});

export const readImageOutputSchema = z.strictObject({
  type: z.literal('image'),
  path: z.string(),
  version: z.string(),
  mediaType: z.enum(['image/png', 'image/jpeg', 'image/gif', 'image/webp']),
  data: z.string(),
  size: z.int(),
  width: z.int(),
  height: z.int(),
});
