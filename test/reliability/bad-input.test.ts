import { afterAll } from 'vitest';
import { describeBadInput } from './bad-input.js';
import { summary } from './tally.js';

// One section of the reliability suite (docs/RELIABILITY.md), in a file of its own so the sections
// run in parallel; its figures are printed at the end.
describeBadInput();

afterAll(() => {
  console.log(summary('bad input'));
});
