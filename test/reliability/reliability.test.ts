import { afterAll } from 'vitest';
import { describeBadInput } from './bad-input.js';
import { describeConcurrency } from './concurrency.js';
import { describeFaults } from './faults.js';
import { describeLimits } from './limits.js';
import { describeOutOfBand } from './out-of-band.js';
import { describePermissions } from './permissions.js';
import { summary } from './tally.js';

/**
 * The reliability and security suite (docs/RELIABILITY.md): one file, so that one summary line
 * reports the figures of every section. DSH_FS_HEAVY=1 runs every section at a larger size.
 */

describeConcurrency();
describeOutOfBand();
describeFaults();
describeBadInput();
describePermissions();
describeLimits();

afterAll(() => {
  console.log(summary());
});
