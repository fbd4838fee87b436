import { afterAll } from 'vitest';
import { describeFaults } from './faults.js';
import { summary } from './tally.js';

// One section of the reliability suite (docs/RELIABILITY.md), in a file of its own so the sections
// run in parallel; its figures are printed at the end.
describeFaults();

afterAll(() => {
  console.log(summary('faults'));
});
