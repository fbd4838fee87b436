// Stands in for fast-check under `npm run test:stress`: every property runs FC_FACTOR times as
// many cases (default 10), each from a fresh seed unless the test replays a fixed one.
import * as real from '../../node_modules/fast-check/lib/fast-check.js';

export * from '../../node_modules/fast-check/lib/fast-check.js';

const factor = Number(process.env.FC_FACTOR ?? 10);
if (!Number.isInteger(factor) || factor < 1) throw new Error(`FC_FACTOR must be a positive integer, got ${process.env.FC_FACTOR}`);

type Assert = typeof real.assert;
export const assert = ((property: Parameters<Assert>[0], params?: Parameters<Assert>[1]) =>
  real.assert(property, { ...params, numRuns: (params?.numRuns ?? 100) * factor })) as Assert;

export default { ...real.default, assert };
