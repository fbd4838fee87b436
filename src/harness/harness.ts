import { FsError, canonicalPath, type FileSystem } from '../seam/index.js';
import { createEventGate, type FsEventGate, type ListenerErrorHandler } from './events.js';
import { createToolRegistry, type ToolRegistry } from './tools.js';

/** A plugin: a named object whose `apply` installs deciders, listeners or tools on a context. */
export interface HarnessPluginObject {
  readonly name: string;
  apply(ctx: HarnessContext): void;
}

/** A plugin object, or a bare function applied to the context. */
export type HarnessPlugin = HarnessPluginObject | ((ctx: HarnessContext) => void);

export interface HarnessOptions {
  /** The filesystem the tools work on. */
  readonly fs: FileSystem;
  /** Applied in order. */
  readonly plugins?: readonly HarnessPlugin[];
  /** Directory for relative tool paths (default: `fs.cwd`). */
  readonly cwd?: string;
  /** Where failing `fs/observed` listeners are reported (default: `console.warn`). */
  readonly onListenerError?: ListenerErrorHandler;
}

export interface HarnessContext {
  readonly fs: FileSystem;
  readonly cwd: string;
  readonly events: FsEventGate;
  readonly tools: ToolRegistry;
  /** Names of the plugin objects applied so far, in order. */
  readonly plugins: readonly string[];
  /** Applies one more plugin; a second plugin object with the same name is refused. */
  use(plugin: HarnessPlugin): HarnessContext;
}

/**
 * A harness context: `ctx.fs`, the `fs/*` event gate and a tool registry. Every context is its
 * own instance; nothing is shared between contexts except what the caller passes in.
 */
export function createHarness(options: HarnessOptions): HarnessContext {
  if (typeof options !== 'object' || options === null) throw new FsError('FS_INVALID_ARGUMENT', 'createHarness needs { fs }');
  const { fs } = options;
  if (typeof fs !== 'object' || fs === null || typeof fs.resolve !== 'function' || typeof fs.cwd !== 'string') {
    throw new FsError('FS_INVALID_ARGUMENT', 'createHarness needs a FileSystem as `fs` (e.g. from createMemoryFs)');
  }
  const cwd = options.cwd === undefined ? fs.cwd : canonicalPath(options.cwd, fs.cwd);
  const events = createEventGate(options.onListenerError ? { onListenerError: options.onListenerError } : {});
  const tools = createToolRegistry({ fs, events, cwd });
  const applied: string[] = [];

  const ctx: HarnessContext = {
    fs,
    cwd,
    events,
    tools,
    plugins: applied,
    use(plugin) {
      if (typeof plugin === 'function') {
        plugin(ctx);
        return ctx;
      }
      if (typeof plugin !== 'object' || plugin === null || typeof plugin.apply !== 'function' || typeof plugin.name !== 'string') {
        throw new FsError('FS_INVALID_ARGUMENT', 'a plugin is a function or an object { name, apply(ctx) }');
      }
      if (applied.includes(plugin.name)) throw new FsError('FS_INVALID_ARGUMENT', `plugin "${plugin.name}" is already applied`);
      plugin.apply(ctx);
      applied.push(plugin.name);
      return ctx;
    },
  };
  for (const plugin of options.plugins ?? []) ctx.use(plugin);
  return ctx;
}
