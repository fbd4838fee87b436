import { afterAll, beforeAll, expect, test } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { makeArea, type Area } from './helpers.js';

// Separate filesystems over one root do not share the provider's lock, as separate processes
// would not: only the publishing step itself can tell one creator from the others.
let area: Area;
beforeAll(async () => {
  area = await makeArea('create-race');
});
afterAll(async () => {
  await area.cleanup();
});

test('unguarded byte writes of one new file from separate filesystems: exactly one reports create', async () => {
  const writers = Array.from({ length: 4 }, () => createLocalFs({ root: area.root }));
  for (let round = 0; round < 60; round++) {
    const path = `dir-${round % 3}/new-${round}.txt`;
    const outcomes = await Promise.all(
      writers.map(async (fs, i) => {
        const target = await fs.resolve(path);
        return fs.writeBytes(target, new TextEncoder().encode(`writer ${i}\n`));
      }),
    );
    const creates = outcomes.filter((o) => o.operation === 'create').length;
    expect(creates, `round ${round}: ${outcomes.map((o) => o.operation).join(', ')}`).toBe(1);
    // The file holds the bytes of one of the writers, with the version that writer was given.
    const read = await writers[0]!.readText(await writers[0]!.resolve(path));
    expect(outcomes.map((o) => o.version)).toContain(read.version);
  }
});
