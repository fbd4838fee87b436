import { afterAll } from 'vitest';
import { describePermissions } from './permissions.js';
import { summary } from './tally.js';

// One section of the reliability suite (docs/RELIABILITY.md), in a file of its own so the sections
// run in parallel; its figures are printed at the end.
describePermissions();

afterAll(() => {
  console.log(summary('permissions'));
});
