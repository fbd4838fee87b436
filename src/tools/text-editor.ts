import { z } from 'zod';
import { FsError, decodeText, lineBreaks, type FsTarget, type FsVersion } from '../seam/index.js';
import type { HarnessContext, HarnessPluginObject, Tool, ToolCall } from '../harness/index.js';
import { clipMiddle, shownPath } from '../harness/tools.js';
import { withRemedy } from './errors.js';
import { readCurrent } from './patch/plan.js';
import { EditHistory, createFile, insertText, strReplace, undoEdit, type ChangeResult } from './text-editor-changes.js';

// Anthropic's text editor tool (`str_replace_based_edit_tool`) over the contract and the policy:
// `view` observes like read, `create` is guarded like write, `str_replace` and `insert` like edit.

export const TEXT_EDITOR_NAME = 'str_replace_based_edit_tool';
/** The Messages API type the native definition declares. */
export const TEXT_EDITOR_TYPE = 'text_editor_20250728';

export interface TextEditorOptions {
  /** Characters one view returns before it is clipped (default 16,000); the native definition's `max_characters`. */
  readonly maxCharacters?: number;
}

const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'undo_edit'] as const;

export function createTextEditorSchema() {
  return z.strictObject({
    command: z.enum(COMMANDS).describe('view, create, str_replace, insert or undo_edit.'),
    path: z.string().min(1, 'must be a non-empty path').describe('Path of the file or directory: absolute, or relative to the working directory.'),
    view_range: z.array(z.int()).length(2).nullish().describe('view: [first, last] line, 1-based; last -1 means to the end.'),
    file_text: z.string().nullish().describe('create: the content of the file.'),
    old_str: z.string().nullish().describe('str_replace: the exact text to replace; it must occur exactly once.'),
    new_str: z.string().nullish().describe('str_replace: the replacement (empty deletes); insert: the text to insert.'),
    insert_line: z.int().min(0).nullish().describe('insert: the line after which to insert (0 inserts before the first line).'),
    insert_text: z.string().nullish().describe('insert: the text to insert.'),
  });
}

export type TextEditorArgs = z.output<ReturnType<typeof createTextEditorSchema>>;

export interface TextEditorValue {
  readonly command: (typeof COMMANDS)[number];
  readonly path: string;
  /** What the model sees. */
  readonly output: string;
  /** The file's version after the command (absent for a directory, or a file undo removed). */
  readonly version?: FsVersion;
}

/** The shape of the text editor's value (MCP's `outputSchema`). */
export const textEditorOutputSchema = z.strictObject({
  command: z.enum(COMMANDS),
  path: z.string(),
  output: z.string(),
  version: z.string().optional(),
});

export const TEXT_EDITOR_DESCRIPTION =
  'View, create and edit text files. view shows a file with line numbers ("N: text") or lists a directory two levels ' +
  'deep; create writes a new file (an existing file only after you viewed it); str_replace replaces old_str, which ' +
  'must occur exactly once; insert adds text after insert_line; undo_edit reverts your last change to a file if ' +
  'nobody changed it since. Editing requires that you viewed the file and that it has not changed since.';

const need = <T>(value: T | null | undefined, name: string, command: string): T => {
  if (value === undefined || value === null) throw new FsError('FS_INVALID_ARGUMENT', `${command} needs ${name}`);
  return value;
};

/** Numbered lines `from`..`to` (1-based, inclusive) of some text. */
function numbered(lines: readonly string[], from: number, to: number): string {
  const out: string[] = [];
  for (let i = from; i <= to; i++) out.push(`${i}: ${lines[i - 1]!.replaceAll('\r', '␍')}`);
  return out.join('\n');
}

/** A few numbered lines around a change, as the result of an edit shows it. */
function snippet(text: string, change: ChangeResult): string {
  const { lines } = lineBreaks(text);
  if (lines.length === 0) return '(the file is empty)';
  const from = Math.max(1, change.from - 3);
  const to = Math.min(lines.length, Math.max(change.to, change.from) + 3);
  return numbered(lines, Math.min(from, lines.length), to);
}

async function viewFile(call: ToolCall, target: FsTarget, range: readonly number[] | null | undefined, max: number): Promise<TextEditorValue> {
  const current = await readCurrent(call, target);
  if (current === undefined) throw new FsError('FS_NOT_FOUND', `the path "${target.displayPath}" does not exist`);
  const { text } = decodeText(current.bytes, `cannot view "${target.displayPath}"`);
  call.events.observed(target, { kind: 'present', version: current.version }, call.owner);
  const { lines } = lineBreaks(text);
  let [from, to] = [1, lines.length];
  if (range != null) {
    [from, to] = [range[0]!, range[1] === -1 ? lines.length : range[1]!];
    if (from < 1 || from > Math.max(lines.length, 1) || to < from || to > lines.length) {
      throw new FsError('FS_INVALID_ARGUMENT', `view_range [${range.join(', ')}] is not within the file's lines 1-${lines.length} (use -1 as the end for "to the end")`);
    }
  }
  const body = lines.length === 0 ? '(the file is empty)' : numbered(lines, from, to);
  const clipped = body.length > max ? `${body.slice(0, max)}\n<response clipped: view a narrower view_range to see the rest>` : body;
  return { command: 'view', path: target.displayPath, output: clipped, version: current.version };
}

const MAX_LISTED = 1000;

async function viewDirectory(call: ToolCall, target: FsTarget): Promise<TextEditorValue> {
  const out: string[] = [];
  let more = 0;
  const hidden = (path: string) => path.split('/').some((s) => s.startsWith('.'));
  for await (const e of call.fs.walk(target, { prune: (e) => e.path.includes('/') || hidden(e.path), ...(call.signal ? { signal: call.signal } : {}) })) {
    if (hidden(e.path)) continue;
    if (out.length >= MAX_LISTED) more++;
    else out.push(`${e.path}${e.type === 'directory' ? '/' : ''}`);
  }
  const header = `Files and directories up to 2 levels deep in "${shownPath(target.displayPath)}", hidden items excluded:`;
  const tail = more > 0 ? [`… and ${more} more`] : [];
  return { command: 'view', path: target.displayPath, output: [header, ...(out.length === 0 ? ['(empty)'] : out), ...tail].join('\n') };
}

async function run(args: TextEditorArgs, call: ToolCall, history: EditHistory, max: number): Promise<TextEditorValue> {
  const target = await call.fs.resolve(args.path, { cwd: call.cwd, ...(call.signal ? { signal: call.signal } : {}) });
  const path = target.displayPath;
  const shown = `"${shownPath(path)}"`;
  switch (args.command) {
    case 'view': {
      const info = await call.fs.stat(target, { versioned: false, ...(call.signal ? { signal: call.signal } : {}) });
      if (info?.type === 'directory') {
        if (args.view_range != null) throw new FsError('FS_INVALID_ARGUMENT', 'view_range applies to files, not directories');
        return viewDirectory(call, target);
      }
      return viewFile(call, target, args.view_range, max);
    }
    case 'create': {
      const r = await createFile(call, history, target, need(args.file_text, 'file_text', 'create'));
      return { command: 'create', path, version: r.version, output: `${r.created ? 'Created' : 'Overwrote'} ${shown}.` };
    }
    case 'str_replace': {
      const r = await strReplace(call, history, target, need(args.old_str, 'old_str', 'str_replace'), args.new_str ?? '');
      return { command: 'str_replace', path, version: r.version, output: `Edited ${shown}. The lines around the change:\n${snippet(r.text, r)}` };
    }
    case 'insert': {
      const text = args.insert_text ?? args.new_str;
      const r = await insertText(call, history, target, need(args.insert_line, 'insert_line', 'insert'), need(text, 'insert_text', 'insert'));
      return { command: 'insert', path, version: r.version, output: `Inserted into ${shown}. The lines around the insertion:\n${snippet(r.text, r)}` };
    }
    case 'undo_edit': {
      const r = await undoEdit(call, history, target);
      const output = r.removed ? `Undid the creation of ${shown}: the file is removed.` : `Undid the last edit of ${shown}.`;
      return { command: 'undo_edit', path, ...(r.version === undefined ? {} : { version: r.version }), output };
    }
  }
}

export function createTextEditorTool(options: TextEditorOptions = {}): Tool<TextEditorArgs, TextEditorValue> {
  const max = options.maxCharacters ?? 16_000;
  if (!Number.isSafeInteger(max) || max < 1) throw new FsError('FS_INVALID_ARGUMENT', `maxCharacters must be a positive integer, got ${String(max)}`);
  const history = new EditHistory();
  return {
    name: TEXT_EDITOR_NAME,
    title: 'Text editor',
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    description: TEXT_EDITOR_DESCRIPTION,
    schema: createTextEditorSchema(),
    outputSchema: textEditorOutputSchema,
    render: (value) => clipMiddle(value.output, max + 200),
    async execute(args, call) {
      try {
        return await run(args, call, history, max);
      } catch (err) {
        throw withRemedy(err, `${args.command} failed for "${args.path}"`);
      }
    },
  };
}

/** The plugin that registers `str_replace_based_edit_tool`. */
export function textEditorTool(options: TextEditorOptions = {}): HarnessPluginObject & { readonly maxCharacters?: number } {
  const tool = createTextEditorTool(options);
  return {
    name: 'text-editor-tool',
    ...(options.maxCharacters === undefined ? {} : { maxCharacters: options.maxCharacters }),
    apply(ctx: HarnessContext) {
      ctx.tools.register(tool);
    },
  };
}
