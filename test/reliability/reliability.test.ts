import { afterAll } from 'vitest';
import { describeConcurrency } from './concurrency.js';
import { describeFaults } from './faults.js';
import { describeOutOfBand } from './out-of-band.js';
import { summary } from './tally.js';

/**
 * The reliability and security suite (docs/RELIABILITY.md): one file, so that one summary line
 * reports the figures of every section. DSH_FS_HEAVY=1 runs every section at a larger size.
 */

describeConcurrency();
describeOutOfBand();
describeFaults();

afterAll(() => {
  console.log(summary());
});
