export { createHarness, type HarnessContext, type HarnessOptions, type HarnessPlugin, type HarnessPluginObject } from './harness.js';
export {
  createEventGate,
  type EditGuard,
  type EditIntentDecider,
  type FsDeciders,
  type FsDecisionEvent,
  type FsEventGate,
  type FsEventGateOptions,
  type FsEventName,
  type ListenerErrorHandler,
  type ObservedListener,
  type Owner,
  type WriteIntentDecider,
} from './events.js';
export {
  createToolRegistry,
  describeIssues,
  errorResult,
  toJsonSchema,
  type JsonSchema,
  type Tool,
  type ToolCall,
  type ToolErrorInfo,
  type ToolExec,
  type ToolListing,
  type ToolRegistry,
  type ToolResult,
} from './tools.js';
