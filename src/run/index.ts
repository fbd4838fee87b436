export { runInSandbox } from './run.js';
export type { RunConflict, RunOptions, RunResult, RunSandboxAccess, RunSkipped } from './types.js';
