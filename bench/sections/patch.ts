import { createHarness } from '../../src/harness/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, patchTools } from '../../src/tools/index.js';
import { interleave, reps, row, type BenchRow } from '../lib.js';
import { markerOf, smallFile } from '../subjects.js';

const SECTION = 'patch';
const FILES = 2_000;
const OWNER = 'bench-session';

const pathOf = (i: number) => `src/f${String(i).padStart(4, '0')}.ts`;
const flagLine = (i: number, flip: number) => `  const flag = ${markerOf(flip)}; // file ${i}`;

/** One `apply_patch` call changing a line in each of 2,000 files, against 2,000 `write` calls. */
export async function runPatchBench(): Promise<BenchRow[]> {
  const seed = Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`/w/${pathOf(i)}`, smallFile(i)]));
  const harness = () =>
    createHarness({ fs: createMemoryFs({ files: seed, cwd: '/w' }), plugins: [createObservationPolicy(), fsTools(), patchTools()] });
  const patchCtx = harness();
  const writeCtx = harness();
  const exec = { owner: OWNER };
  // The policy wants every file read before it is changed.
  for (const ctx of [patchCtx, writeCtx]) {
    for (let i = 0; i < FILES; i++) {
      const r = await ctx.tools.execute('read', { file_path: pathOf(i) }, exec);
      if (r.isError) throw new Error(`setup read failed: ${r.text}`);
    }
  }
  // Inputs built ahead, so only the tools are timed.
  const patches = [0, 1].map((flip) => {
    const parts = Array.from({ length: FILES }, (_, i) => `*** Update File: ${pathOf(i)}\n@@\n-${flagLine(i, flip)}\n+${flagLine(i, flip + 1)}\n`);
    return `*** Begin Patch\n${parts.join('')}*** End Patch`;
  });
  const contents = [0, 1].map((flip) => Array.from({ length: FILES }, (_, i) => smallFile(i).replace(flagLine(i, 0), flagLine(i, flip + 1))));

  const flips = { patch: 0, write: 0 };
  const t = await interleave(
    {
      patch: async () => {
        const r = await patchCtx.tools.execute('apply_patch', { input: patches[flips.patch % 2] }, exec);
        if (r.isError) throw new Error(r.text);
        flips.patch++;
      },
      write: async () => {
        const batch = contents[flips.write % 2]!;
        for (let i = 0; i < FILES; i++) {
          const r = await writeCtx.tools.execute('write', { file_path: pathOf(i), content: batch[i] }, exec);
          if (r.isError) throw new Error(r.text);
        }
        flips.write++;
      },
    },
    { reps: reps(5), warmup: 1 },
  );
  const c = `${FILES.toLocaleString('en')} files of 1 KiB, one line each (memory)`;
  return [row({ section: SECTION, case: c, subject: 'apply_patch, one call', unit: 'ms' }, t.patch, { name: `write tool, ${FILES.toLocaleString('en')} calls`, timing: t.write })];
}
