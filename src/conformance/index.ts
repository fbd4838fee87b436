/**
 * The conformance suite: any `FileSystem` built on the seam, run against every rule of the
 * contract (docs/conformance.md), with fast-check properties, interleavings and a model-based
 * check. fast-check is an optional peer: without it, importing this entry fails with an FsError
 * that names it and the command that installs it.
 */
import { importPeer } from '../peers.js';

await importPeer('fast-check', 'fast-check', 'dsh-fs/conformance');
const kit = await import('./kit.js');

export const { describeConformance, runConformance, RULES, seamPerCall } = kit;
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
