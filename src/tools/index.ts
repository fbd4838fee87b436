import type { HarnessContext, HarnessPluginObject, Tool } from '../harness/index.js';
import { toolListing } from '../harness/index.js';
import { formatTools, type AnthropicToolDefinition, type ToolDefinitionFor, type ToolFormat } from '../adapters/definitions.js';
import { createSearchTools, type SearchToolsOptions } from './search.js';
import type { ReadValue } from './read.js';
import type { WriteValue } from './write.js';
import type { EditValue } from './edit.js';
import type { GlobValue, GrepValue } from './search.js';
import { createEditTool } from './edit.js';
import { createReadTool } from './read.js';
import { toolLimits, type FsToolsOptions } from './schemas.js';
import { createWriteTool } from './write.js';

export interface FsToolSuite {
  readonly read: ReturnType<typeof createReadTool>;
  readonly write: ReturnType<typeof createWriteTool>;
  readonly edit: ReturnType<typeof createEditTool>;
}

/** The three tools, configured. */
export function createFsTools(options: FsToolsOptions = {}): FsToolSuite {
  const limits = toolLimits(options);
  return { read: createReadTool(limits), write: createWriteTool(), edit: createEditTool() };
}

/** The plugin that registers `read`, `write` and `edit` on a harness, as one suite. */
export function fsTools(options: FsToolsOptions = {}): HarnessPluginObject {
  const suite = createFsTools(options);
  return {
    name: 'fs-tools',
    apply(ctx: HarnessContext) {
      const tools: Tool[] = [suite.read, suite.write, suite.edit];
      const clash = tools.find((t) => ctx.tools.has(t.name));
      if (clash) ctx.tools.register(clash); // throws the registry's duplicate-name error, before anything is added
      for (const tool of tools) ctx.tools.register(tool);
    },
  };
}

/** A tool definition in Anthropic's shape (`input_schema`); see `toolDefinitions({ format })` for others. */
export type ToolDefinition = AnthropicToolDefinition;

export interface ToolDefinitionsOptions<F extends ToolFormat = ToolFormat> extends FsToolsOptions, SearchToolsOptions {
  /** The API's shape (default `anthropic`). */
  readonly format?: F;
  /** Include `glob` and `grep` (default true, as `dsh-fs serve` does). */
  readonly search?: boolean;
}

/**
 * Definitions of the tools in one LLM API's own shape: `anthropic` → `{ name, description,
 * input_schema }`; `openai` / `openai-strict` → `{ type: 'function', function: { name,
 * description, parameters, strict? } }`. Run calls with `ctx.tools.execute(name, args, …)`.
 */
export function toolDefinitions<F extends ToolFormat = 'anthropic'>(options: ToolDefinitionsOptions<F> = {}): ToolDefinitionFor<F>[] {
  const suite = createFsTools(options);
  const tools: Tool[] = [suite.read, suite.write, suite.edit];
  if (options.search !== false) {
    const search = createSearchTools(options);
    tools.push(search.glob, search.grep);
  }
  return formatTools(tools.map(toolListing), options.format ?? ('anthropic' as F));
}

export {
  DEFAULT_TOOL_LIMITS,
  EDIT_DESCRIPTION,
  WRITE_DESCRIPTION,
  createEditSchema,
  createReadSchema,
  createWriteSchema,
  editSchema,
  readDescription,
  readSchema,
  toolLimits,
  writeSchema,
  type EditArgs,
  type FsToolLimits,
  type FsToolsOptions,
  type ReadArgs,
  type WriteArgs,
} from './schemas.js';
export { createReadTool, readFooter, readWindow, renderRead, renderReadLine, type ReadLine, type ReadValue, type TextWindow, type WindowOptions } from './read.js';
export { createWriteTool, renderWrite, type WriteValue } from './write.js';
export { createEditTool, renderEdit, type EditValue } from './edit.js';
export { REMEDIES, withRemedy } from './errors.js';
export { editOutputSchema, globOutputSchema, grepOutputSchema, readOutputSchema, writeOutputSchema } from './outputs.js';
export {
  TOOL_FORMATS,
  formatTools,
  toOpenAIStrictSchema,
  type AnthropicToolDefinition,
  type OpenAIToolDefinition,
  type ToolDefinitionFor,
  type ToolFormat,
} from '../adapters/definitions.js';

// `ctx.tools.execute('read', …)` resolves to a ToolResult<ReadValue>, and so on.
declare module '../harness/tools.js' {
  interface ToolValues {
    read: ReadValue;
    write: WriteValue;
    edit: EditValue;
    glob: GlobValue;
    grep: GrepValue;
  }
}
export {
  DEFAULT_SEARCH_LIMITS,
  compareNewestFirst,
  createGlobSchema,
  createGlobTool,
  createGrepSchema,
  createGrepTool,
  createSearchTools,
  globDescription,
  globSchema,
  grepDescription,
  grepSchema,
  includeProblem,
  renderGlob,
  renderGrep,
  searchToolDefinitions,
  searchToolLimits,
  searchTools,
  type GlobArgs,
  type GlobValue,
  type GrepArgs,
  type GrepLine,
  type GrepValue,
  type SearchToolLimits,
  type SearchToolSuite,
  type SearchToolsOptions,
} from './search.js';
