import type { HarnessContext, HarnessPluginObject, Tool } from '../harness/index.js';
import { toJsonSchema, type JsonSchema } from '../harness/index.js';
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

/** A tool definition in the shape LLM APIs take (`input_schema` as JSON Schema). */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly input_schema: JsonSchema;
}

/** Definitions of the three tools, ready for Anthropic-style APIs (or OpenAI's `parameters`). */
export function toolDefinitions(options: FsToolsOptions = {}): ToolDefinition[] {
  const suite = createFsTools(options);
  return [suite.read, suite.write, suite.edit].map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: toJsonSchema(t.schema),
  }));
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
