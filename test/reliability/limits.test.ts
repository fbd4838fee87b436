import { afterAll } from 'vitest';
import { describeLimits } from './limits.js';
import { summary } from './tally.js';

// One section of the reliability suite (docs/RELIABILITY.md), in a file of its own so the sections
// run in parallel; its figures are printed at the end.
describeLimits();

afterAll(() => {
  console.log(summary('limits'));
});
