// The kit's values, loaded by index.ts once fast-check (an optional peer) is known to be there.
export { describeConformance } from './vitest.js';
export { runConformance, RULES } from './run.js';
export { seamPerCall } from './harness.js';
