import type { HarnessContext, HarnessPluginObject, Tool } from '../harness/index.js';
import { toolListing } from '../harness/index.js';
import type { z } from 'zod';
import type { createDeleteSchema, createMoveSchema } from './manage.js';
import type { createEditSchema, createReadSchema, createWriteSchema } from './schemas.js';
import type { createGlobSchema, createGrepSchema } from './search.js';
import type { createListSchema } from './list.js';
import type { createPatchSchema } from './patch/tool.js';
import type { createTextEditorSchema } from './text-editor.js';
import { formatTools, type AnthropicToolDefinition, type ToolDeclarationFor, type ToolDefinitionFor, type ToolFormat } from '../adapters/definitions.js';
import { createSearchTools, type SearchToolsOptions } from './search.js';
import type { ReadResultValue } from './read.js';
import type { WriteValue } from './write.js';
import type { EditValue } from './edit.js';
import type { GlobValue, GrepValue } from './search.js';
import { createEditTool } from './edit.js';
import { createReadTool } from './read.js';
import { toolLimits, type FsToolsOptions } from './schemas.js';
import { createWriteTool } from './write.js';
import { createListTool, type ListValue } from './list.js';
import { createDeleteTool, createMoveTool, type DeleteValue, type MoveValue } from './manage.js';
import { createPatchTool, type PatchValue } from './patch/tool.js';
import { createTextEditorTool, type TextEditorOptions, type TextEditorValue } from './text-editor.js';

export interface FsToolSuite {
  readonly read: ReturnType<typeof createReadTool>;
  readonly write: ReturnType<typeof createWriteTool>;
  readonly edit: ReturnType<typeof createEditTool>;
  readonly list: ReturnType<typeof createListTool>;
}

/** The four tools, configured. */
export function createFsTools(options: FsToolsOptions = {}): FsToolSuite {
  const limits = toolLimits(options);
  return { read: createReadTool(limits), write: createWriteTool(), edit: createEditTool(), list: createListTool(limits) };
}

function registerAll(ctx: HarnessContext, tools: readonly Tool[]): void {
  const clash = tools.find((t) => ctx.tools.has(t.name));
  if (clash) ctx.tools.register(clash); // throws the registry's duplicate-name error, before anything is added
  for (const tool of tools) ctx.tools.register(tool);
}

/** The plugin that registers `read`, `write`, `edit` and `list` on a harness, as one suite. */
export function fsTools(options: FsToolsOptions = {}): HarnessPluginObject {
  const suite = createFsTools(options);
  return {
    name: 'fs-tools',
    apply(ctx: HarnessContext) {
      registerAll(ctx, [suite.read, suite.write, suite.edit, suite.list]);
    },
  };
}

export interface MoveDeleteToolSuite {
  readonly move: ReturnType<typeof createMoveTool>;
  readonly delete: ReturnType<typeof createDeleteTool>;
}

export function createMoveDeleteTools(): MoveDeleteToolSuite {
  return { move: createMoveTool(), delete: createDeleteTool() };
}

/**
 * The plugin that registers `move` and `delete`. Separate from `fsTools()` and off by default
 * everywhere: they take content away, so a harness opts in (as `dsh-fs serve` does for a
 * reviewed sandbox, or with `--allow-delete`).
 */
export function moveDeleteTools(): HarnessPluginObject {
  const suite = createMoveDeleteTools();
  return {
    name: 'move-delete-tools',
    apply(ctx: HarnessContext) {
      registerAll(ctx, [suite.move, suite.delete]);
    },
  };
}

/** A tool definition in Anthropic's shape (`input_schema`); see `toolDefinitions({ format })` for others. */
type ToolDefinition = AnthropicToolDefinition;

export interface ToolDefinitionsOptions<F extends ToolFormat = ToolFormat> extends FsToolsOptions, SearchToolsOptions {
  /** The API's shape (default `anthropic`). */
  readonly format?: F;
  /** Include `glob` and `grep` (default true, as `dsh-fs serve` does). */
  readonly search?: boolean;
  /** Include `move` and `delete` (default false). */
  readonly allowDelete?: boolean;
  /** Include `apply_patch` (default false). */
  readonly patch?: boolean;
  /**
   * Include `str_replace_based_edit_tool` (default false); in the `anthropic` shape it is declared
   * natively (`{ type: 'text_editor_20250728', name }`, with `max_characters` when set).
   */
  readonly textEditor?: boolean | TextEditorOptions;
}

/**
 * Definitions of the tools in one LLM API's own shape: `anthropic` → `{ name, description,
 * input_schema }`; `openai` / `openai-strict` → `{ type: 'function', function: { name,
 * description, parameters, strict? } }`; `openai-responses` → `{ type: 'function', name,
 * description, parameters, strict: true }`. Run calls with `ctx.tools.execute(name, args, …)`.
 */
export function toolDefinitions<F extends ToolFormat = 'anthropic'>(
  options: ToolDefinitionsOptions<F> & { readonly textEditor: true | TextEditorOptions },
): ToolDeclarationFor<F>[];
export function toolDefinitions<F extends ToolFormat = 'anthropic'>(options?: ToolDefinitionsOptions<F>): ToolDefinitionFor<F>[];
export function toolDefinitions<F extends ToolFormat = 'anthropic'>(options: ToolDefinitionsOptions<F> = {}): ToolDeclarationFor<F>[] {
  const suite = createFsTools(options);
  const tools: Tool[] = [suite.read, suite.write, suite.edit, suite.list];
  if (options.search !== false) {
    const search = createSearchTools(options);
    tools.push(search.glob, search.grep);
  }
  if (options.allowDelete === true) {
    const manage = createMoveDeleteTools();
    tools.push(manage.move, manage.delete);
  }
  if (options.patch === true) tools.push(createPatchTool());
  const editor = options.textEditor === true ? {} : options.textEditor || undefined;
  if (editor !== undefined) tools.push(createTextEditorTool(editor));
  const max = editor?.maxCharacters;
  return formatTools(tools.map(toolListing), options.format ?? ('anthropic' as F), { nativeTextEditor: max === undefined ? true : { maxCharacters: max } });
}

export {
  createReadSchema,
  editSchema,
  readSchema,
  writeSchema,
  type FsToolLimits,
  type FsToolsOptions,
} from './schemas.js';
export {
  isImageValue,
  renderRead,
  type ReadImageValue,
  type ReadLine,
  type ReadResultValue,
  type ReadValue,
} from './read.js';
export { type ImageMediaType } from './image.js';
export { renderWrite, type WriteValue } from './write.js';
export { renderEdit, type EditValue } from './edit.js';
export {
  listSchema,
  renderList,
  type ListEntry,
  type ListValue,
} from './list.js';
export {
  deleteSchema,
  moveSchema,
  renderDelete,
  renderMove,
  type DeleteValue,
  type MoveValue,
} from './manage.js';

export {
  deleteOutputSchema,
  editOutputSchema,
  globOutputSchema,
  grepOutputSchema,
  listOutputSchema,
  moveOutputSchema,
  readImageOutputSchema,
  readOutputSchema,
  writeOutputSchema,
} from './outputs.js';
export {
  formatTools,
  toOpenAIStrictSchema,
  toolResultContent,
  type AnthropicToolResultBlock,
  type OpenAIImagePart,
  type ToolResultContentFor,
  type AnthropicToolDefinition,
  type AnthropicTextEditorDefinition,
  type FormatOptions,
  type OpenAIResponsesToolDefinition,
  type ToolDeclarationFor,
  type OpenAIToolDefinition,
  type ToolDefinitionFor,
  type ToolFormat,
} from '../adapters/definitions.js';

// `ctx.tools.execute('read', …)` resolves to a ToolResult<ReadValue>, and so on.
declare module '../harness/tools.js' {
  interface ToolValues {
    read: ReadResultValue;
    write: WriteValue;
    edit: EditValue;
    glob: GlobValue;
    grep: GrepValue;
    list: ListValue;
    move: MoveValue;
    delete: DeleteValue;
    apply_patch: PatchValue;
    str_replace_based_edit_tool: TextEditorValue;
  }
  interface ToolInputs {
    read: z.input<ReturnType<typeof createReadSchema>>;
    write: z.input<ReturnType<typeof createWriteSchema>>;
    edit: z.input<ReturnType<typeof createEditSchema>>;
    glob: z.input<ReturnType<typeof createGlobSchema>>;
    grep: z.input<ReturnType<typeof createGrepSchema>>;
    list: z.input<ReturnType<typeof createListSchema>>;
    move: z.input<ReturnType<typeof createMoveSchema>>;
    delete: z.input<ReturnType<typeof createDeleteSchema>>;
    apply_patch: z.input<ReturnType<typeof createPatchSchema>>;
    str_replace_based_edit_tool: z.input<ReturnType<typeof createTextEditorSchema>>;
  }
}
export {
  createGlobSchema,
  createGlobTool,
  createGrepSchema,
  createGrepTool,
  globSchema,
  grepSchema,
  renderGlob,
  renderGrep,
  searchToolDefinitions,
  searchTools,
  type GlobArgs,
  type GlobValue,
  type GrepArgs,
  type GrepLine,
  type GrepValue,
  type SearchToolsOptions,
} from './search.js';
export {
  createPatchTool,
  patchOutputSchema,
  patchTools,
  type PatchArgs,
  type PatchFileChange,
  type PatchValue,
} from './patch/tool.js';
export { parsePatch, formatPatch, type PatchHunk, type PatchLine, type PatchOperation } from './patch/parse.js';
export { type LoosenedHunk } from './patch/apply.js';
export { type MatchLevel } from './patch/match.js';
export {
  textEditorOutputSchema,
  textEditorTool,
  type TextEditorOptions,
  type TextEditorValue,
} from './text-editor.js';
export {
  applyPatchOperation,
  createPatchEditor,
  type ApplyPatchOperation,
  type ApplyPatchOperationResult,
  type PatchEditor,
  type PatchOperationOptions,
} from './patch/responses.js';
