import { afterAll, describe } from 'vitest';
import { describeConformance } from '../../src/conformance/index.js';
import { SERVER, closeShared, postgresSubject, sharedPglite, sharedPool } from './helpers.js';

describeConformance('postgres (PGlite)', async () => postgresSubject(await sharedPglite()));

describe.runIf(SERVER !== undefined)('against DSH_FS_TEST_PG', () => {
  afterAll(closeShared);
  describeConformance('postgres (server)', async () => postgresSubject(sharedPool()));
});
