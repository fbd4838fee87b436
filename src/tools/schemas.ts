import { z } from 'zod';
import { FsError } from '../seam/index.js';

export interface FsToolsOptions {
  /** Default and largest number of lines one read returns (default 2000). */
  readonly maxLines?: number;
  /** Characters (Unicode code points) shown per line before it is truncated (default 2000). */
  readonly maxLineChars?: number;
  /**
   * UTF-8 bytes of numbered lines one read returns, `N: ` prefixes and line breaks included
   * (default 51200 = 50 KiB; at least 1024).
   */
  readonly maxBytes?: number;
  /** Largest image (PNG, JPEG, GIF, WebP) one read returns, in bytes (default 5 MiB); larger ones are FS_TOO_LARGE. */
  readonly maxImageBytes?: number;
  /** Levels the list tool shows below the listed directory (default 3). */
  readonly listMaxDepth?: number;
  /** Entries one list shows (default 500). */
  readonly listMaxEntries?: number;
  /** Entries one list may visit, ignored ones included, before it stops (default 100,000). */
  readonly listMaxScan?: number;
}

export interface FsToolLimits {
  readonly maxLines: number;
  readonly maxLineChars: number;
  readonly maxBytes: number;
  readonly maxImageBytes: number;
  readonly listMaxDepth: number;
  readonly listMaxEntries: number;
  readonly listMaxScan: number;
}

export const DEFAULT_TOOL_LIMITS: FsToolLimits = Object.freeze({
  maxLines: 2000,
  maxLineChars: 2000,
  maxBytes: 50 * 1024,
  maxImageBytes: 5 * 1024 * 1024,
  listMaxDepth: 3,
  listMaxEntries: 500,
  listMaxScan: 100_000,
});
const MIN_MAX_BYTES = 1024;

export function toolLimits(options: FsToolsOptions = {}): FsToolLimits {
  const pick = (name: keyof FsToolLimits, min: number) => {
    const value = options[name] ?? DEFAULT_TOOL_LIMITS[name];
    if (!Number.isSafeInteger(value) || value < min) {
      throw new FsError('FS_INVALID_ARGUMENT', `${name} must be an integer of at least ${min}, got ${String(value)}`);
    }
    return value;
  };
  return {
    maxLines: pick('maxLines', 1),
    maxLineChars: pick('maxLineChars', 1),
    maxBytes: pick('maxBytes', MIN_MAX_BYTES),
    maxImageBytes: pick('maxImageBytes', 1),
    listMaxDepth: pick('listMaxDepth', 1),
    listMaxEntries: pick('listMaxEntries', 1),
    listMaxScan: pick('listMaxScan', 1),
  };
}

/** "50 KiB" for whole KiB, else "N bytes". */
export function formatBytes(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

/** Not empty and not only whitespace: a path of spaces is a mistake, never a file to create. */
export const NOT_BLANK = /\S/;

const FILE_PATH = (verb: string) =>
  z
    .string()
    .min(1, { message: 'must be a non-empty path', abort: true })
    .regex(NOT_BLANK, 'must not be blank')
    .describe(`Path of the file to ${verb}: absolute, or relative to the working directory.`);

export function createReadSchema(limits: FsToolLimits = DEFAULT_TOOL_LIMITS) {
  return z.strictObject({
    file_path: FILE_PATH('read'),
    offset: z
      .int()
      .min(1, 'must be 1 or more (line numbers start at 1)')
      .nullish()
      .describe('1-based number of the first line to return. Defaults to 1.'),
    limit: z
      .int()
      .min(1, 'must be 1 or more')
      .nullish()
      .describe(`Maximum number of lines to return. Defaults to ${limits.maxLines}, which is also the most one call returns.`),
  });
}

export function createWriteSchema() {
  return z.strictObject({
    file_path: FILE_PATH('create or replace'),
    content: z.string().describe('The complete UTF-8 text the file will contain.'),
  });
}

const OLD_STRING_HELP =
  'Exact text to replace, copied from the file without the "N: " line-number prefixes of read output. ' +
  'LF and CRLF line breaks match each other; everything else must match exactly.';

export function createEditSchema() {
  const oldString = z.string().min(1, 'must not be empty (to create a file, use write)');
  return z
    .strictObject({
      file_path: FILE_PATH('edit'),
      old_string: oldString.nullish().describe(`${OLD_STRING_HELP} Required unless edits is given.`),
      new_string: z.string().nullish().describe('Replacement text, taken literally. An empty string deletes the match. Required with old_string.'),
      replace_all: z
        .boolean()
        .nullable()
        .default(false)
        .describe('Replace every match. Defaults to false: then old_string must match exactly one place in the file.'),
      edits: z
        .array(
          z.strictObject({
            old_string: oldString.describe(OLD_STRING_HELP),
            new_string: z.string().describe('Replacement text, taken literally.'),
            replace_all: z.boolean().nullish().describe('Replace every match of this old_string (default false).'),
          }),
        )
        .min(1, 'must hold at least one edit')
        .nullish()
        .describe(
          'Several replacements instead of old_string/new_string: applied in order, each to the result of the previous ' +
            'one, and written together only if every one applies.',
        ),
    })
    .superRefine(
      (args, ctx) => {
        if (typeof args !== 'object' || args === null) return;
        if (args.edits != null) {
          if (args.old_string != null || args.new_string != null || args.replace_all === true) {
            ctx.addIssue({ code: 'custom', message: 'give either old_string and new_string, or edits, not both', path: ['edits'] });
          }
          return;
        }
        for (const key of ['old_string', 'new_string'] as const) {
          if (args[key] == null) ctx.addIssue({ code: 'custom', message: `missing required argument "${key}" (or give edits)`, path: [] });
        }
      },
      // Checked even when another argument is wrong, so one reply names every problem.
      { when: () => true },
    );
}

/** `args` when it is a plain object with no other keys than `allowed`, none undefined (anything else is left to zod). */
function plainArgs(args: unknown, allowed: readonly string[]): Record<string, unknown> | undefined {
  if (typeof args !== 'object' || args === null || Array.isArray(args) || Object.getPrototypeOf(args) !== Object.prototype) return undefined;
  for (const [key, value] of Object.entries(args)) if (!allowed.includes(key) || value === undefined) return undefined;
  return args as Record<string, unknown>;
}

const isPath = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && NOT_BLANK.test(v);
const isLineNumber = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;
const READ_KEYS = ['file_path', 'offset', 'limit'];
const EDIT_KEYS = ['file_path', 'old_string', 'new_string', 'replace_all'];

/** createReadSchema's parse of plain arguments (a property compares the two), else undefined. */
export function quickReadArgs(args: unknown): ReadArgs | undefined {
  const a = plainArgs(args, READ_KEYS);
  if (a === undefined || !isPath(a.file_path)) return undefined;
  const { file_path, offset, limit } = a;
  if ((offset !== undefined && !isLineNumber(offset)) || (limit !== undefined && !isLineNumber(limit))) return undefined;
  return { file_path, ...(offset !== undefined ? { offset } : {}), ...(limit !== undefined ? { limit } : {}) };
}

/** createEditSchema's parse of one plain old_string/new_string pair (a property compares the two), else undefined. */
export function quickEditArgs(args: unknown): EditArgs | undefined {
  const a = plainArgs(args, EDIT_KEYS);
  if (a === undefined || !isPath(a.file_path)) return undefined;
  const { file_path, old_string, new_string, replace_all } = a;
  if (typeof old_string !== 'string' || old_string.length === 0 || typeof new_string !== 'string') return undefined;
  if (replace_all !== undefined && typeof replace_all !== 'boolean') return undefined;
  return { file_path, old_string, new_string, replace_all: replace_all ?? false };
}

// Optional arguments are nullish: OpenAI's strict mode (and its zodFunction helper) needs them
// nullable, and a model sends null for an omitted option; null means "left out".
export type ReadArgs = z.output<ReturnType<typeof createReadSchema>>;
export type WriteArgs = z.output<ReturnType<typeof createWriteSchema>>;
export type EditArgs = z.output<ReturnType<typeof createEditSchema>>;

/** The input schemas with the default limits. */
export const readSchema = createReadSchema();
export const writeSchema = createWriteSchema();
export const editSchema = createEditSchema();

export function readDescription(limits: FsToolLimits = DEFAULT_TOOL_LIMITS): string {
  return (
    'Read a UTF-8 text file. Each line is shown as "N: text", where N is its 1-based line number (not part of the file). ' +
    `One call returns at most ${limits.maxLines} lines and ${formatBytes(limits.maxBytes)}; ` +
    `lines longer than ${limits.maxLineChars} characters are cut and marked. A footer says whether the file continues ` +
    'and which offset to read next. A carriage return that does not end a line is shown as ␍. ' +
    'Reading any part of a file lets you write or edit it afterwards, as long as nobody else changes it in between.'
  );
}

export const WRITE_DESCRIPTION =
  'Create a UTF-8 text file, or replace an existing file with new content. Creating a new file needs no prior read. ' +
  'Replacing an existing file requires that you have read it (any part, with read) or written or edited it, and that ' +
  'it has not changed since; otherwise the call fails and you must read the file, then retry. A file with CRLF line ' +
  'endings or a byte order mark keeps them. Prefer edit for targeted changes.';

export const EDIT_DESCRIPTION =
  'Replace literal text in an existing UTF-8 text file. Requires that you have read the file (any part, with read) or ' +
  'written or edited it, and that it has not changed since; otherwise the call fails and you must read the file, then ' +
  'retry. After a successful write or edit you can edit again without re-reading. old_string must match exactly one ' +
  'place unless replace_all is true; the result gives the number of replacements and the changed line numbers. ' +
  'To make several changes to one file at once, pass edits: [{ old_string, new_string, replace_all? }, …] instead; ' +
  'they apply in order and are written together, or not at all. ' +
  'Only the matched text changes: line endings, indentation and a byte order mark elsewhere are kept.';
