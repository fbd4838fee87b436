import { promises as fsp, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createLocalProvider } from '../../src/backends/local/index.js';
import { makeArea, type Area } from './helpers.js';

let area: Area;
beforeEach(async () => {
  area = await makeArea('resolve-fast');
});
afterEach(async () => {
  await area.cleanup();
});

const answer = (p: Promise<{ targetKey: string }>) => p.then((t) => `key ${t.targetKey}`, (e: { code?: string }) => `error ${e.code}`);

// A path with no link on the way resolves from one realpath call; with a given `io` the provider
// resolves hop by hop. Both must give the same key or the same refusal, whatever the tree.
test('resolve by realpath answers as resolve hop by hop (property)', async () => {
  const name = fc.constantFrom('a', 'b', 'l', 'f.txt');
  const linkTo = fc.constantFrom('a', '../a', 'b/f.txt', 'nowhere', '/etc', '..', '../..', 'l', '.');
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.tuple(fc.array(name, { minLength: 1, maxLength: 3 }), fc.constantFrom('dir', 'file', 'link'), linkTo), { maxLength: 8, selector: ([p]) => p.join('/') }),
      fc.array(fc.array(name, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
      async (entries, probes) => {
        const root = await fsp.mkdtemp(join(area.root, 't-'));
        for (const [parts, kind, to] of entries) {
          const at = join(root, ...parts);
          try {
            mkdirSync(join(at, '..'), { recursive: true });
            if (kind === 'dir') mkdirSync(at);
            else if (kind === 'file') writeFileSync(at, 'x');
            else symlinkSync(to, at);
          } catch {
            // taken, or a parent is not a directory: left out
          }
        }
        const fast = createLocalProvider({ root });
        const slow = createLocalProvider({ root, io: fsp });
        for (const parts of probes) {
          const p = join(root, ...parts);
          expect(await answer(fast.resolve(p, {})), p).toBe(await answer(slow.resolve(p, {})));
        }
      },
    ),
    { numRuns: 150 },
  );
});
