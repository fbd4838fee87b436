/**
 * The conformance suite: any `FileSystem` built on the seam, run against every rule of the
 * contract (DESIGN §4), with fast-check properties, interleavings and a model-based check.
 */
export { describeConformance } from './vitest.js';
export { runConformance, RULES } from './run.js';
export { seamPerCall } from './harness.js';
export type {
  ConformanceCapabilities,
  ConformanceFactory,
  ConformanceOptions,
  ConformanceSubject,
  OutOfBandHooks,
  RuleInfo,
  RuleResult,
  SetupHooks,
} from './types.js';
