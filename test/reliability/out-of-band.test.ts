import { afterAll } from 'vitest';
import { describeOutOfBand } from './out-of-band.js';
import { summary } from './tally.js';

// One section of the reliability suite (docs/RELIABILITY.md), in a file of its own so the sections
// run in parallel; its figures are printed at the end.
describeOutOfBand();

afterAll(() => {
  console.log(summary('out-of-band'));
});
