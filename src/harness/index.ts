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
  type RemoveIntentDecider,
  type RenameGuard,
  type RenameIntentDecider,
  type Owner,
  type WriteIntentDecider,
} from './events.js';
export {
  createToolRegistry,
  describeIssues,
  errorResult,
  toJsonSchema,
  toolListing,
  type JsonSchema,
  type Tool,
  type ToolCall,
  type ToolCallHook,
  type ToolCallInfo,
  type ToolErrorInfo,
  type ToolExec,
  type ToolListing,
  type ToolRegistry,
  type ToolFailure,
  type ToolHints,
  type ToolResult,
  type ToolSuccess,
  type ToolInputOf,
  type ToolInputs,
  type ToolValueOf,
  type ToolValues,
} from './tools.js';
export { auditPlugin, type AuditErrorHandler, type AuditPluginOptions } from './audit.js';
export { CONTENT_ARGS, MAX_KEPT_ARG_BYTES, PATH_ARGS, digestOf, ownerId, pathsNamed, redactArgs, type ContentDigest } from './audit-args.js';
export {
  auditMatcher,
  createMemoryAuditLog,
  parseAuditRecord,
  selectAudit,
  type AuditLog,
  type AuditPath,
  type AuditQuery,
  type AuditRecord,
} from './audit-log.js';
export { AUDIT_FILE, createJsonlAuditLog, type JsonlAuditLogOptions } from './audit-jsonl.js';
export type { ToolNoteSource } from './notes.js';
