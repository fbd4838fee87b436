import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../cli/helpers.js';
import { REPO, runScript } from '../local/helpers.js';
import { runInSandbox } from '../../src/run/index.js';
import { overlayfsMissing, project } from './support.js';

const missing = await overlayfsMissing();
if (missing !== undefined && process.env.CI) throw new Error(`CI must run the overlayfs tests: ${missing}`);
const full = process.env.DSH_FS_SCALE !== undefined;

/** Where the process doing the run is killed: around the import's one change, or part-way through moving the run's files into the kept layer. */
type Point = 'before import' | 'during import' | 'after import' | `layer rename ${number}`;

const FILES = 12;
const PROGRAM = `mkdir -p out/sub && for i in $(seq 1 ${FILES}); do echo "file $i" > out/sub/f$i; done && head -c 9000 /dev/zero > out/big && echo A > a.txt && rm gone.txt`;

/**
 * A child opens the sandbox and runs PROGRAM, and kills itself with SIGKILL at `point`: the
 * state's apply of the run's change (wrapped on the prototype the overlay uses), or the Nth
 * rename into the kept layer (node:fs patched, its ESM bindings synced).
 */
/** The built package's module for a source file (dist/, which the CLI's tests build too). */
const built = (source: string) => pathToFileURL(join(REPO, 'dist', source.replace(/^src\//, '').replace(/\.ts$/, '.js'))).href;

const childScript = (root: string, state: string, point: Point) => `
  const fs = (await import('node:fs')).default;
  const { syncBuiltinESMExports } = await import('node:module');
  const { UpperState } = await import(${JSON.stringify(built('src/backends/overlay/state.ts'))});
  const { createLocalFs } = await import(${JSON.stringify(built('src/backends/local/index.ts'))});
  const { createOverlayFs } = await import(${JSON.stringify(built('src/backends/overlay/index.ts'))});
  const { runInSandbox } = await import(${JSON.stringify(built('src/run/index.ts'))});
  const point = ${JSON.stringify(point)};
  const die = () => process.kill(process.pid, 'SIGKILL');
  const apply = UpperState.prototype.apply;
  UpperState.prototype.apply = function (change, options) {
    if (change.label?.source?.startsWith('run:')) {
      if (point === 'before import') die();
      if (point === 'during import') { const p = apply.call(this, change, options); setImmediate(die); return p; }
      if (point === 'after import') return apply.call(this, change, options).then(die);
    }
    return apply.call(this, change, options);
  };
  const m = /^layer rename (\\d+)$/.exec(point);
  if (m) {
    let n = 0;
    const renameSync = fs.renameSync;
    fs.renameSync = (from, to) => { if (to.includes('/layer/') && ++n === Number(m[1])) die(); return renameSync(from, to); };
    syncBuiltinESMExports();
  }
  const sandbox = await createOverlayFs({ lower: createLocalFs({ root: ${JSON.stringify(root)} }), stateDir: ${JSON.stringify(state)} });
  await runInSandbox(sandbox, ['sh', '-c', ${JSON.stringify(PROGRAM)}], { scratchDir: ${JSON.stringify(join(state, 'run'))}, stdio: 'ignore' });
  process.stdout.write('finished\\n');
`;

const points: Point[] = full
  ? ['before import', 'during import', 'during import', 'after import', 'layer rename 1', 'layer rename 5', `layer rename ${FILES}`, `layer rename ${FILES + 1}`]
  : ['before import', 'after import', 'layer rename 5'];

describe.skipIf(missing !== undefined)(`a run killed while it imports${missing === undefined ? '' : ` (skipped: ${missing})`}`, () => {
  beforeAll(() => ensureBuilt(), 300_000);

  it.each(points.map((p, i) => [p, i] as const))('killed %s (%#): the sandbox holds none of the run or all of it; the next run sees exactly that', async (point) => {
    const p = await project({ 'a.txt': 'a\n', 'gone.txt': 'g\n', 'keep.txt': 'k\n' });
    try {
      // A first run keeps a layer, so the killed run has one to update.
      const warm = await p.sandbox();
      await warm.writeText(await warm.resolve(join(p.root, 'agent.txt')), 'agent\n');
      await runInSandbox(warm, ['true'], { scratchDir: p.scratch });
      const child = await runScript(childScript(p.root, p.state, point), { timeoutMs: 60_000 });
      expect(child.signal, child.stderr).toBe('SIGKILL');

      const sandbox = await p.sandbox();
      const at = (rel: string) => sandbox.resolve(join(p.root, rel));
      const has = async (rel: string) => (await sandbox.stat(await at(rel))) !== undefined;
      const all = [...Array.from({ length: FILES }, (_, i) => `out/sub/f${i + 1}`), 'out/big'];
      const present = await Promise.all(all.map(has));
      const imported = present[0]!;
      expect(present.every((x) => x === imported), `${point}: ${present.join(',')}`).toBe(true);
      expect((await sandbox.readText(await at('a.txt'))).text).toBe(imported ? 'A\n' : 'a\n');
      expect(await has('gone.txt')).toBe(!imported);
      if (point === 'before import') expect(imported).toBe(false);
      if (point !== 'before import' && point !== 'during import') expect(imported).toBe(true);

      // The next run: the dead run's directory swept, the layer (rebuilt if the kill left it dirty) shows the sandbox.
      const show = 'cat a.txt agent.txt; echo $(ls out/sub 2>/dev/null | wc -l); test -e gone.txt && echo gone-here; cat out/sub/f7 2>/dev/null; test -e out/big && echo $(wc -c < out/big); true';
      const next = await runInSandbox(sandbox, ['sh', '-c', show], { scratchDir: p.scratch, stdio: 'pipe' });
      const expected = imported ? `A\nagent\n${FILES}\nfile 7\n9000\n` : 'a\nagent\n0\ngone-here\n';
      expect(next.stdout?.toString()).toBe(expected);
      expect(next.added.length + next.changed.length + next.deleted.length).toBe(0);
      expect(await readdir(join(p.scratch, 'runs'))).toEqual([]);
      const manifest = JSON.parse(await readFile(join(p.scratch, 'layer.json'), 'utf8')) as { dirty: boolean };
      expect(manifest.dirty).toBe(false);
    } finally {
      await p.cleanup();
    }
  }, 120_000);
});
