import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureBuilt } from '../cli/helpers.js';
import { makeArea, REPO, type Area } from './helpers.js';

// Helper processes of a search stay for the next one, but never keep their parent alive, and end
// with it: a program that greps returns by itself, and leaves no process behind.
const run = promisify(execFile);

let area: Area;
beforeAll(async () => {
  await ensureBuilt();
  area = await makeArea('search-helpers-exit');
  for (let i = 0; i < 400; i++) {
    mkdirSync(join(area.root, `d${i % 3}`), { recursive: true });
    writeFileSync(join(area.root, `d${i % 3}`, `f${i}.txt`), i % 9 === 0 ? `needle ${i}\n` : `other ${i}\n`);
  }
}, 120_000);
afterAll(async () => {
  await area.cleanup();
});

it('a program that greps with helper processes exits by itself, and its helpers end with it', async () => {
  const dist = (path: string) => pathToFileURL(join(REPO, 'dist', path)).href;
  const program = `
    import { readFileSync } from 'node:fs';
    const { grep } = await import(${JSON.stringify(dist('index.js'))});
    const { createLocalFs } = await import(${JSON.stringify(dist('backends/local/index.js'))});
    const fs = createLocalFs({ root: ${JSON.stringify(area.root)}, searchThreads: 2, searchHelpers: 'processes' });
    const found = await grep(fs, 'needle');
    const helpers = readFileSync('/proc/self/task/' + process.pid + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean);
    console.log(JSON.stringify({ matches: found.matches.length, helpers }));
  `;
  // A program kept alive by its helpers is killed (and fails) well after it should have ended.
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program], { timeout: 50_000 });
  const { matches, helpers } = JSON.parse(stdout) as { matches: number; helpers: string[] };
  expect(matches).toBe(Math.ceil(400 / 9));
  expect(helpers.length).toBeGreaterThan(0);
  // Each ends once its channel to the parent closes (gone, or a zombie where nothing reaps orphans).
  const running = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
    } catch {
      return false;
    }
  };
  for (const pid of helpers) await expect.poll(() => running(pid), { timeout: 20_000, interval: 50 }).toBe(false);
}, 60_000);
