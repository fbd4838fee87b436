import { toolListing, type HarnessContext, type HarnessPluginObject, type Tool } from '../harness/index.js';
import { formatTools, type ToolDefinitionFor, type ToolFormat } from '../adapters/definitions.js';
import { createGlobTool, type GlobValue } from './glob.js';
import { createGrepTool, type GrepValue } from './grep.js';
import type { GlobArgs, GrepArgs, SearchToolsOptions } from './search-schemas.js';

export {
  DEFAULT_SEARCH_LIMITS,
  createGlobSchema,
  createGrepSchema,
  globDescription,
  globSchema,
  grepDescription,
  grepSchema,
  includeProblem,
  searchToolLimits,
  type GlobArgs,
  type GrepArgs,
  type SearchToolLimits,
  type SearchToolsOptions,
} from './search-schemas.js';
export { compareNewestFirst, createGlobTool, renderGlob, type GlobValue } from './glob.js';
export { createGrepTool, renderGrep, type GrepLine, type GrepValue } from './grep.js';
export { displayPath } from './search-notes.js';

export interface SearchToolSuite {
  readonly glob: Tool<GlobArgs, GlobValue>;
  readonly grep: Tool<GrepArgs, GrepValue>;
}

export function createSearchTools(options: SearchToolsOptions = {}): SearchToolSuite {
  return { glob: createGlobTool(options), grep: createGrepTool(options) };
}

/**
 * The plugin that registers `glob` and `grep` on a harness. Separate from `fsTools()` so a
 * harness can offer search without the mutating tools, or the reverse.
 */
export function searchTools(options: SearchToolsOptions = {}): HarnessPluginObject {
  const suite = createSearchTools(options);
  return {
    name: 'search-tools',
    apply(ctx: HarnessContext) {
      const tools: Tool[] = [suite.glob, suite.grep];
      const clash = tools.find((t) => ctx.tools.has(t.name));
      if (clash) ctx.tools.register(clash); // the registry's duplicate-name error, before anything is added
      for (const tool of tools) ctx.tools.register(tool);
    },
  };
}

/** Definitions of `glob` and `grep` alone (`toolDefinitions()` includes them by default). */
export function searchToolDefinitions<F extends ToolFormat = 'anthropic'>(options: SearchToolsOptions & { readonly format?: F } = {}): ToolDefinitionFor<F>[] {
  const suite = createSearchTools(options);
  // Neither is declared natively, so every entry is a plain definition.
  return formatTools([suite.glob, suite.grep].map(toolListing), options.format ?? ('anthropic' as F)) as ToolDefinitionFor<F>[];
}
